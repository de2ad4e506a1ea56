"""The one job every hand-over target runs on every VM: the bootstrap ``launch`` runs on a TPU VM
(uv, the pinned ``jax[tpu]``, the plan's packages), then tpuwizard's verifier, then the script.

``launch`` runs the same three pieces as three jobs over SSH (core/launch/lifecycle/on_workers.py);
here they are one bash file, ``tpuwizard_job.sh``, written into the folder the engine ships (xpk's
``--script-dir``, SkyPilot's ``workdir``, the JobSet's image) beside the verifier. The pieces are
the launch's own functions, so a change to the bootstrap or the verifier's arguments reaches both.
The verifier prints its receipt as a ``TPUWIZARD {json}`` line, so each VM's log holds it.
"""

from __future__ import annotations

from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME
from tpuwizard.core.export_marks import JOB_FILENAME, MARKER
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.launch.plan.packages import PackageSpec, package_names
from tpuwizard.core.launch.workers.distributed import script_command
from tpuwizard.core.launch.workers.jobs import script_env
from tpuwizard.core.launch.workers.multihost import JoinPlan
from tpuwizard.core.remote.bootstrap import VENV, BootstrapPlan, bootstrap_script
from tpuwizard.core.remote.packages import install_commands
from tpuwizard.core.remote.transports import REMOTE_DIR, shell

# Seconds the verifier waits for every process of the slice to join: launch's (Runtime).
JOIN_TIMEOUT = 300


def shipped_path(plan: HandoverPlan, name: str) -> str:
    """``name`` in the export's folder, as the job finds it from the folder shipped."""
    return name if plan.folder == "." else f"{plan.folder}/{name}"


def files_note(plan: HandoverPlan, own: str, what: str) -> str:
    """The header's line naming exactly the files this export wrote (``own``: the target's)."""
    return (
        f"This export wrote three files into {plan.folder}/: {own} ({what}), {VERIFIER_FILENAME} "
        f"(the verifier) and {JOB_FILENAME} (the job every VM runs)."
    )


def job_command(plan: HandoverPlan) -> list[str]:
    """How every target starts the job, from the folder shipped."""
    return ["bash", shipped_path(plan, JOB_FILENAME)]


def receipt_path(plan: HandoverPlan) -> str:
    """Where the verifier writes its receipt, relative to the job's folder."""
    return f"{REMOTE_DIR}/runs/{plan.workload}/receipt.json"


def verifier_command(plan: HandoverPlan) -> str:
    """The verifier's command line, as launch's on a TPU VM (where JAX finds the slice itself)."""
    specs = [PackageSpec(text, "--with") for text in plan.packages]
    extras: list[str] = []
    for name in package_names(specs):
        extras += ["--package", name]
    join = JoinPlan(plan.processes, plan.slice.devices * plan.slices, None, JOIN_TIMEOUT)
    return shell(
        f"{VENV}/bin/python",
        "-u",
        shipped_path(plan, VERIFIER_FILENAME),
        "--expect",
        "tpu",
        "--min-devices",
        str(plan.gke.chips_per_vm * plan.slice.generation.devices_per_chip),
        "--receipt",
        receipt_path(plan),
        *extras,
        *join.args(0),
    )


def job_script(plan: HandoverPlan) -> str:
    """The bash file every target runs (``bash tpuwizard_job.sh``); exits non-zero at the first
    step that fails, so the engine's restarts and logs see the failure."""
    specs = [PackageSpec(text, "--with") for text in plan.packages]
    bootstrap = bootstrap_script(
        BootstrapPlan().with_jax(plan.jax), install_commands(plan.packages), package_names(specs)
    )
    env = script_env("tpu", plan.slice, plan.workload)
    lines = [
        "#!/usr/bin/env bash",
        f"# {MARKER} for {plan.slice.name} x {plan.slices}: the bootstrap, the",
        "# verifier and the script, as tpuwizard launch runs them on a TPU VM.",
        bootstrap,
        "# The environment every tpuwizard route gives the verifier and the script.",
        *(f"export {name}={shell(value)}" for name, value in env.items()),
        f"{verifier_command(plan)} || exit $?",
    ]
    if plan.script is not None:
        python = f"{VENV}/bin/python"
        lines.append(f"{script_command(python, plan.script, plan.script_args, None)} || exit $?")
    return "\n".join(lines) + "\n"
