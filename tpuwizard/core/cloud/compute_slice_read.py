"""A slice's parts as Compute Engine answers them, read into one node (compute_slices.py):
its state from its MIG's topology and its VMs, its labels from its template (or a part's note),
its workers' addresses in the VMs' name order."""

from __future__ import annotations

from typing import Any

from tpuwizard.core.cloud import compute_slice_body as body
from tpuwizard.core.cloud.compute_errors import DEGRADED_CODE, OperationError
from tpuwizard.core.cloud.types import NodeInfo

PARTS_LEFT = "PARTS_LEFT"  # no MIG, but its template or policy is still there (costs nothing)
# Topology states that end a wait: the slice will not become whole (compute.v1.json's enum).
TOPOLOGY_DEAD_ENDS = frozenset({"ACTIVE_DEGRADED", "FAILED", "DEACTIVATING"})


def slice_info(
    zone: str, name: str, mig: Any, template: Any, policy: Any, vms: list[Any], requests: int = 0
) -> NodeInfo:
    """The slice as one node, from whichever of its parts exist (at least one does);
    ``requests``: how many resize requests its MIG holds (the course's Route 2B)."""
    note = next(
        (
            found
            for part in (mig, template, policy)
            if part is not None and (found := body.read_note(part.description or ""))
        ),
        None,
    )
    labels = dict(template.properties.labels) if template is not None else {}
    if not labels and note is not None:
        labels = dict(note.labels)
    if not labels and vms:
        labels = dict(vms[0].labels)
    interfaces = [list(v.network_interfaces)[:1] for v in vms]
    external = [list(i[0].access_configs)[:1] if i else [] for i in interfaces]
    created = (mig or template or policy).creation_timestamp
    return NodeInfo(
        name=name,
        zone=zone,
        accelerator_type=note.accelerator if note else "",
        state=state_of(mig, vms),
        labels=labels,
        create_time=parse_time(created) if created else None,
        endpoints=tuple(i[0].network_i_p if i else "" for i in interfaces),
        spot=any(v.scheduling.provisioning_model == "SPOT" for v in vms),
        external_ips=tuple(c[0].nat_i_p if c else "" for c in external),
        uid=str(mig.id or "") if mig is not None else "",
        flex=any(v.scheduling.provisioning_model == "FLEX_START" for v in vms),
        parts=part_words(mig, template, policy, len(vms), requests),
    )


def part_words(
    mig: Any, template: Any, policy: Any, vms: int, requests: int = 0
) -> tuple[str, ...]:
    """The parts there are, as status names them: ("MIG", "4 VMs", "template", "policy"), and
    Route 2B's "resize request"."""
    counted = f"{vms} VM" + ("s" if vms != 1 else "") if vms else None
    named = (
        ("MIG", mig),
        (counted, vms),
        ("resize request", requests),
        ("template", template),
        ("policy", policy),
    )
    return tuple(str(words) for words, there in named if words and there)


def mig_is_ours(mig: Any, name: str) -> bool:
    """A MIG whose description carries tpuwizard's note for this slice: one of the same name
    without it (someone else's) is never read as ours, nor deleted."""
    note = body.read_note(mig.description or "") if mig is not None else None
    return note is not None and note.slice_name == name


def ours(parts: list[Any], zone: str) -> dict[str, Any]:
    """Parts whose note says they belong to a slice in ``zone``, by slice name."""
    found = {}
    for part in parts:
        note = body.read_note(part.description or "")
        if note is not None and note.zone == zone:
            found[note.slice_name] = part
    return found


def state_of(mig: Any, vms: list[Any]) -> str:
    """RUNNING once the topology is ACTIVE and every VM runs; else the topology's state, the
    first VM not running, PROVISIONING while none exists, PARTS_LEFT without a MIG."""
    if mig is None:
        return "DELETING" if vms else PARTS_LEFT
    topologies = [t.state for t in mig.status.applied_accelerator_topologies]
    # A MIG with no workload policy (the course's Route 2B, one VM) has no topology to wait on.
    topology = str(topologies[0]) if topologies else ""
    if not mig.resource_policies.workload_policy:
        topology = "ACTIVE"
    if topology in TOPOLOGY_DEAD_ENDS:
        return topology
    waiting = [str(v.status) for v in vms if v.status != "RUNNING"]
    if not vms:
        return "PROVISIONING"
    if waiting:
        return waiting[0]
    return "RUNNING" if topology == "ACTIVE" else topology or "ACTIVATING"


def degraded(name: str, state: str, zone: str) -> OperationError:
    message = (
        f"The slice's topology is {state} in {zone}: not every VM of the slice got its TPUs "
        "connected, which on Google means too little capacity for the whole slice now"
    )
    return OperationError(name, [{"code": DEGRADED_CODE, "message": message}])


def parse_time(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
