"""The xpk commands for a plan: make (or adapt) the cluster, write the JobSet to read, run the
workload, delete both. Each value is shell-quoted; the flags are xpk 1.16.0's.

Of the admission values (core/handover/admission.py), xpk takes a reservation as the cluster's
capacity (``--reservation`` in place of ``--on-demand``) and a priority from its own five
(``workload create --priority``); it writes the Kueue queue label itself, always its own
LocalQueue, with no flag for another, so ``--queue`` is refused here.
"""

from __future__ import annotations

from tpuwizard.core.errors import BadInput
from tpuwizard.core.handover import workload_policy
from tpuwizard.core.handover.admission import XPK_PRIORITIES
from tpuwizard.core.handover.gke import XPK_VERSION
from tpuwizard.core.handover.idle import CPU_POOL_NODES, cluster_bills, header
from tpuwizard.core.handover.job import files_note, job_command, shipped_path
from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.handover.yaml_text import comment
from tpuwizard.core.remote.transports import shell

# xpk cluster create's capacity flags, by route (xpk/parser/cluster.py).
CAPACITY_FLAG = {"vm": "--on-demand", "spot": "--spot", "flex": "--flex"}
# The LocalQueue xpk cluster create makes and every xpk workload names (xpk/core/kueue_manager.py).
XPK_QUEUE = "multislice-queue"


def check(plan: HandoverPlan) -> None:
    """What xpk has no place for raises :class:`BadInput`, saying what to use."""
    if plan.queue is not None:
        raise BadInput(
            f"--queue has no place in --to xpk: xpk workload create always labels the JobSet "
            f"with its own LocalQueue, {XPK_QUEUE}, and has no flag for another (xpk "
            f"{XPK_VERSION}). Drop --queue, or use --to jobset, which sets the label."
        )
    if plan.priority is not None and plan.priority not in XPK_PRIORITIES:
        raise BadInput(
            f"--priority {plan.priority} has no place in --to xpk: xpk workload create's "
            f"--priority takes only {', '.join(XPK_PRIORITIES)} (the PriorityClasses xpk "
            f"cluster create installs, xpk {XPK_VERSION}). Choose one of them, or use "
            "--to jobset for another class."
        )


def _capacity(plan: HandoverPlan) -> list[str]:
    if plan.reservation is not None:
        return ["--reservation", plan.reservation]  # on-demand's capacity, from the reservation
    return [CAPACITY_FLAG[plan.route]]


def commands_file(plan: HandoverPlan) -> str:
    """The file the export writes these commands to, in its folder."""
    return f"{plan.workload}-xpk.sh"


def manifest_file(plan: HandoverPlan) -> str:
    """Where xpk writes the JobSet it would apply: in the export's folder, not beside the
    script."""
    return shipped_path(plan, f"{plan.workload}-jobset.yaml")


def _where(plan: HandoverPlan) -> list[str]:
    words = ["--cluster", plan.cluster, "--zone", plan.zone]
    return words + (["--project", plan.project] if plan.project else [])


def _slices(plan: HandoverPlan) -> list[str]:
    return ["--tpu-type", plan.slice.name, "--num-slices", str(plan.slices)]


def cluster_create(plan: HandoverPlan) -> str:
    return shell(
        "xpk",
        "cluster",
        "create",
        *_where(plan),
        *_slices(plan),
        *_capacity(plan),
        "--default-pool-cpu-num-nodes",
        str(CPU_POOL_NODES),
    )


def cluster_adapt(plan: HandoverPlan) -> str:
    return shell("xpk", "cluster", "adapt", *_where(plan), *_slices(plan), *_capacity(plan))


def workload_create(plan: HandoverPlan, dry_run: bool) -> str:
    words = [
        "xpk",
        "workload",
        "create",
        *_where(plan),
        "--workload",
        plan.workload,
        *_slices(plan),
        "--script-dir",
        ".",
        "--command",
        shell(*job_command(plan)),
        "--max-restarts",
        str(plan.max_restarts),
        *(["--priority", plan.priority] if plan.priority is not None else []),
        "--output-manifest-file",
        manifest_file(plan),
    ]
    return shell(*words, *(["--dry-run"] if dry_run else []))


def teardown(plan: HandoverPlan) -> list[str]:
    where = shell("--zone", plan.zone, *(["--project", plan.project] if plan.project else []))
    policy = (
        # xpk cluster create makes the policy for TPU7x multi-host and xpk never deletes it.
        [workload_policy.policy_delete(plan) + "  (after the cluster: xpk made it)"]
        if workload_policy.needed(plan)
        else []
    )
    return [
        shell("xpk", "workload", "delete", "--workload", plan.workload, "--cluster", plan.cluster)
        + f" {where}",
        shell("xpk", "cluster", "delete", "--cluster", plan.cluster) + f" {where}",
        *policy,
        shell("gcloud", "container", "clusters", "list") + f" {where}",
    ]


def commands(plan: HandoverPlan) -> list[str]:
    """The command lines in the order they are run (the export's body)."""
    return [
        cluster_create(plan),
        workload_create(plan, dry_run=True),
        workload_create(plan, dry_run=False),
    ]


def notes(plan: HandoverPlan) -> list[str]:
    deadline = (
        f"Your --max-run of {plan.max_run_minutes:g} minutes is NOT enforced: xpk has no "
        "deadline flag. Delete the workload yourself, or use --to jobset, which sets it as "
        "each Job's activeDeadlineSeconds."
        if plan.max_run_minutes is not None
        else "No deadline: the workload runs until it ends or you delete it."
    )
    lines = [
        files_note(plan, commands_file(plan), "these commands"),
        f"Run these from the folder that holds {plan.script or 'your code'} and {plan.folder}/: "
        f"xpk's --script-dir . builds an image of it (xpk {XPK_VERSION}).",
        deadline,
        f"A failed run is restarted whole up to {plan.max_restarts} time(s) (--max-restarts).",
        f"Kueue: xpk labels the JobSet with its LocalQueue {XPK_QUEUE}; the Pods' priority "
        f"class is {plan.priority or 'medium (xpk default)'} (--priority: "
        f"{', '.join(XPK_PRIORITIES)}).",
    ]
    if plan.reservation is not None:
        lines.append(
            f"The node pools take their capacity from reservation {plan.reservation} "
            "(--reservation). A reservation bills for what it holds whether or not a job uses "
            "it, until it ends or you delete it; that is not counted above."
        )
    if workload_policy.needed(plan):
        lines.append(
            f"TPU7x multi-host: xpk cluster create makes the HIGH_THROUGHPUT workload policy "
            f"{workload_policy.policy_name(plan)} and passes it to the node pools "
            "(--placement-policy); xpk does not delete it (the teardown does)."
        )
    return lines


def render(plan: HandoverPlan) -> str:
    check(plan)
    head = header(
        f"xpk {XPK_VERSION} commands for {plan.slice.name}: run each line yourself, in order.",
        plan,
        cluster_bills(plan),
        teardown(plan),
    )
    body = [
        "# 1. The cluster and its TPU node pools (they bill from here on). For a cluster you",
        "#    have already, adapt it instead:",
        f"#    {cluster_adapt(plan)}",
        cluster_create(plan),
        "",
        f"# 2. Write the JobSet to {manifest_file(plan)} and read it; nothing is applied.",
        workload_create(plan, dry_run=True),
        "",
        "# 3. Run it: bootstrap, verifier (its receipt line is in each VM's log), your script.",
        workload_create(plan, dry_run=False),
        "",
    ]
    return comment([*head, "", *notes(plan)]) + "\n" + "\n".join(body)
