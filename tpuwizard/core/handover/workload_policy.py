"""TPU7x (Ironwood) multi-host slices on GKE: a HIGH_THROUGHPUT workload policy per topology,
passed to each slice's node pool with ``--placement-policy`` in place of ``--tpu-topology``.

GKE's Ironwood page (kubernetes-engine/docs/concepts/tpu-ironwood, read 2026-12-02: "You create
a workload policy and then apply it by using the --placement-policy flag. This policy replaces
the --tpu-topology flag used by other TPU versions"; Ironwood supports the High throughput
policy). The commands' flags are gcloud's reference pages' (``compute resource-policies create
workload-policy``: ``--type``, ``--accelerator-topology``, ``--region``). Only the opening of
GKE's page could be read here, so the names and the Pods' node selector are xpk 1.16.0's, which
does the same for TPU7x (xpk/core/scheduling.py ``get_placement_policy_name`` and
``create_placement_policy_label``, xpk/core/nodepool.py ``ensure_resource_policy_exists``):
the policy ``<slice>-<topology>-placement-policy``, the selector
``cloud.google.com/placement-policy-name``. The same name lets an xpk-made policy be reused.
"""

from __future__ import annotations

from tpuwizard.core.handover.plan import HandoverPlan
from tpuwizard.core.remote.transports import shell
from tpuwizard.core.routes import Route

SELECTOR = "cloud.google.com/placement-policy-name"
SOURCE = (
    "GKE's Ironwood page, kubernetes-engine/docs/concepts/tpu-ironwood; the names and the "
    "selector as xpk 1.16.0 writes them, xpk/core/nodepool.py and xpk/core/scheduling.py"
)


def needed(plan: HandoverPlan) -> bool:
    """A TPU7x slice of more than one VM is placed by a workload policy."""
    return plan.slice.generation.key == "tpu7x" and plan.gke.vms > 1


def policy_name(plan: HandoverPlan) -> str:
    return f"{plan.slice.name}-{plan.gke.topology}-placement-policy"


def region(plan: HandoverPlan) -> str:
    return plan.zone.rsplit("-", 1)[0]


def _project(plan: HandoverPlan) -> list[str]:
    return ["--project", plan.project] if plan.project else []


def pool_name(plan: HandoverPlan, index: int) -> str:
    """Each slice its own node pool (the JobSet puts one slice on one pool), named as xpk does."""
    return f"{plan.cluster}-np-{index}"


def policy_create(plan: HandoverPlan) -> str:
    return shell(
        "gcloud", "compute", "resource-policies", "create", "workload-policy", policy_name(plan),
        "--type", "HIGH_THROUGHPUT", "--accelerator-topology", plan.gke.topology,
        "--region", region(plan), *_project(plan),
    )  # fmt: skip


def _capacity(plan: HandoverPlan) -> list[str]:
    """The node pool's capacity flags, as xpk 1.16.0 writes them (xpk/core/capacity.py)."""
    if plan.reservation is not None:
        return ["--reservation-affinity", "specific", "--reservation", plan.reservation]
    if plan.route == Route.SPOT:
        return ["--spot"]
    if plan.route == Route.FLEX:
        return ["--flex-start", "--enable-autoscaling", "--location-policy", "ANY",
                "--reservation-affinity", "none", "--no-enable-autorepair",
                "--max-nodes", str(plan.gke.vms)]  # fmt: skip
    return []


def pool_create(plan: HandoverPlan, index: int) -> str:
    machine = dict(plan.slice.generation.machine_types).get(plan.gke.chips_per_vm)
    assert machine is not None, f"the catalog names no machine type for {plan.slice.name}"
    nodes = 0 if plan.route == Route.FLEX else plan.gke.vms  # Flex-start pools grow from 0
    return shell(
        "gcloud", "container", "node-pools", "create", pool_name(plan, index),
        "--cluster", plan.cluster, "--location", region(plan), "--node-locations", plan.zone,
        "--machine-type", machine, "--num-nodes", str(nodes),
        "--placement-policy", policy_name(plan), *_capacity(plan), *_project(plan),
    )  # fmt: skip


def commands(plan: HandoverPlan) -> list[str]:
    """The policy, then one node pool per slice passing it."""
    return [policy_create(plan), *(pool_create(plan, i) for i in range(plan.slices))]


def teardown(plan: HandoverPlan) -> list[str]:
    """The node pools, then the policy they name."""
    return [*(pool_delete(plan, i) for i in range(plan.slices)), policy_delete(plan)]


def pool_delete(plan: HandoverPlan, index: int) -> str:
    return shell(
        "gcloud", "container", "node-pools", "delete", pool_name(plan, index),
        "--cluster", plan.cluster, "--location", region(plan), *_project(plan),
    )  # fmt: skip


def policy_delete(plan: HandoverPlan) -> str:
    return shell(
        "gcloud", "compute", "resource-policies", "delete", policy_name(plan),
        "--region", region(plan), *_project(plan),
    )  # fmt: skip
