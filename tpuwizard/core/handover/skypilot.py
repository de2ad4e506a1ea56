"""The plan as a SkyPilot task and its ``sky launch`` line.

SkyPilot makes TPU VMs through the Cloud TPU API, which Google keeps for bug and security fixes
only, serving no generation after v6e (reference/compute-engine.md): TPU7x cannot go this way,
nor can several slices (SkyPilot runs one slice per cluster) or Flex-start (no flag of SkyPilot's
that this export knows asks for it).
"""

from __future__ import annotations

from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover.idle import ROUTE_WORDS, Bill, header, tpu_price_source
from tpuwizard.core.handover.job import files_note, job_command, shipped_path
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.handover.yaml_text import Value, comment, dump
from tpuwizard.core.plan import cost
from tpuwizard.core.remote.transports import shell
from tpuwizard.core.routes import Route

FROZEN_API = (
    "SkyPilot's TPU path uses the Cloud TPU API, which Google keeps for bug and security fixes "
    "only; new generations (TPU7x on) come through Compute Engine or GKE "
    "(cloud.google.com/tpu/docs/tpus-in-compute-engine, via reference/compute-engine.md)."
)
_SERVED = ("v4", "v5e", "v5p", "v6e")


def check(plan: HandoverPlan) -> None:
    """What SkyPilot's TPU path cannot take raises :class:`BadInput`, saying what to use."""
    if plan.slice.generation.key not in _SERVED:
        raise BadInput(
            f"{plan.slice.name} cannot go to SkyPilot: {FROZEN_API} Use --to xpk or --to jobset."
        )
    if plan.slices > 1:
        raise BadInput(
            "SkyPilot runs one TPU slice per cluster, not Multislice: use --to xpk or "
            "--to jobset for --slices above 1."
        )
    if plan.route == Route.FLEX:
        raise BadInput(
            "tpuwizard's SkyPilot export has no Flex-start: use --route vm or spot, or --to xpk."
        )
    for option, value, why in (
        ("--queue", plan.queue, "a Kueue queue is a Kubernetes one, and this task makes TPU VMs "
         "through the Cloud TPU API, outside any cluster"),
        ("--priority", plan.priority, "its priority and priority_class order managed jobs "
         "(sky jobs launch), not the sky launch this export writes, and name no Kubernetes "
         "PriorityClass"),
        ("--reservation", plan.reservation, "SkyPilot 0.14.1 refuses a reservation for TPU VMs "
         "('TPU VMs do not support reservations yet', sky/provision/gcp/instance_utils.py), and "
         "a task has no field for one"),
    ):  # fmt: skip
        if value is not None:
            raise BadInput(
                f"{option} has no place in --to skypilot: {why}. Use --to jobset or --to xpk, "
                f"or drop {option}."
            )


def task_file(plan: HandoverPlan) -> str:
    return f"{plan.workload}.sky.yaml"


def launch_line(plan: HandoverPlan) -> str:
    """``--down``: SkyPilot tears the cluster down once the job ends. Run from the folder
    shipped, where the task is in the export's folder."""
    return shell(
        "sky", "launch", "--down", "-c", plan.workload, shipped_path(plan, task_file(plan))
    )


def task(plan: HandoverPlan) -> dict[str, Value]:
    resources: dict[str, Value] = {
        "cloud": "gcp",
        "zone": plan.zone,
        "accelerators": f"tpu-{plan.slice.name}",
        "accelerator_args": {
            "runtime_version": plan.slice.generation.runtime_version,
            "tpu_vm": True,
        },
    }
    if plan.route == Route.SPOT:
        resources["use_spot"] = True
    return {
        "name": plan.workload,
        "resources": resources,
        "workdir": ".",
        "run": shell(*job_command(plan)),
    }


def bills(plan: HandoverPlan) -> list[Bill]:
    """What bills while no job runs: the slice itself, until SkyPilot or the user takes it down."""
    return [
        Bill(
            f"the TPU slice {plan.slice.name} ({ROUTE_WORDS[plan.route]}), from sky launch "
            "until SkyPilot tears it down after the job (--down) or you run sky down",
            cost.hourly(plan.slice, plan.route, plan.zone),
            tpu_price_source(plan),
        )
    ]


def teardown(plan: HandoverPlan) -> list[str]:
    return [
        shell("sky", "down", plan.workload),
        shell("sky", "status"),
        shell("gcloud", "compute", "tpus", "tpu-vm", "list", "--zone", plan.zone),
    ]


def render(plan: HandoverPlan) -> str:
    check(plan)
    head = header(f"SkyPilot task for {plan.slice.name}.", plan, bills(plan), teardown(plan))
    notes = [
        FROZEN_API,
        files_note(plan, task_file(plan), "this task"),
        f"Run from the folder that holds {plan.script or 'your code'} and {plan.folder}/ "
        "(SkyPilot copies it, workdir: .):",
        f"  {launch_line(plan)}",
        "No deadline: SkyPilot has none for a task; --max-run is not enforced here."
        if plan.max_run_minutes is not None
        else "No deadline: the task runs until it ends.",
    ]
    return comment([*head, "", *notes]) + dump(task(plan))
