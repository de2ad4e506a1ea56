"""A slice's reads, as the survey, ``status`` and the waits make them: its parts (a zonal MIG, a
regional template, a regional workload policy) and its VMs, through plain REST calls
(compute/rest.py), independent reads made together; then read into one node: its state from its
MIG's topology and its VMs, its labels from its template (or a part's note), its workers'
addresses in the VMs' name order. :class:`ComputeSlices` (compute/slices.py) holds one
:class:`SliceReads` as ``read`` beside its creates, waits and deletes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.errors import DEGRADED_CODE, OperationError
from tpuwizard.core.cloud.compute.rest import ComputeReads
from tpuwizard.core.cloud.google_calls import at_once
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeInfo

PARTS_LEFT = "PARTS_LEFT"  # no MIG, but its template or policy is still there (costs nothing)
# Topology states that end a wait: the slice will not become whole (compute.v1.json's enum).
TOPOLOGY_DEAD_ENDS = frozenset({"ACTIVE_DEGRADED", "FAILED", "DEACTIVATING"})


class SliceReads:
    """The reads of a slice's parts, over one :class:`ComputeReads`."""

    def __init__(self, reads: ComputeReads) -> None:
        self.reads = reads

    def get(self, zone: str, name: str) -> NodeInfo | None:
        """The slice as one node: its MIG, its template's labels, its VMs' addresses; or its
        leftover template or policy (PARTS_LEFT); None when no part is there."""
        region, reads = body.region_of(zone), self.reads
        mig, template, policy = at_once(
            lambda: reads.mig(zone, name),
            lambda: reads.template(region, body.template_name(name)),
            lambda: reads.policy(region, body.policy_name(name)),
        )
        mig = mig if mig_is_ours(mig, name) else None  # a MIG of the name not ours: not there
        if mig is None and template is None and policy is None:
            return None
        asked = len(reads.resize_requests(zone, name)) if mig is not None else 0
        return slice_info(zone, name, mig, template, policy, self._vms(zone, name), asked)

    def listed(self, zone: str) -> tuple[list[Any], list[Any], list[Any]]:
        """The zone's MIGs, and its region's templates and policies, listed at once (a kind
        the server does not serve, 404, has none)."""
        region, reads = body.region_of(zone), self.reads
        found = at_once(
            lambda: _none_if_unserved(reads.migs, zone),
            lambda: _none_if_unserved(reads.templates, region),
            lambda: _none_if_unserved(reads.policies, region),
        )
        return found[0], found[1], found[2]

    def fold(
        self,
        zone: str,
        instances: list[Any],
        listed: tuple[list[Any], list[Any], list[Any]] | None = None,
    ) -> tuple[list[NodeInfo], list[Any]]:
        """Our slices in ``zone`` (each one node, leftover parts included) and the instances
        that belong to none of them; ``listed`` is :meth:`listed`'s answer, when read already."""
        all_migs, all_templates, all_policies = listed or self.listed(zone)
        migs = {m.name: m for m in all_migs if mig_is_ours(m, m.name)}  # others': never ours
        templates = ours(all_templates, zone)
        policies = ours(all_policies, zone)
        members: dict[str, list[Any]] = {}
        loose = []
        for vm in instances:
            owner = dict(vm.labels).get(body.SLICE_LABEL)
            if owner:
                members.setdefault(owner, []).append(vm)
            else:
                loose.append(vm)
        names = set(templates) | set(policies) | set(members)
        names |= set(migs)
        nodes = [
            slice_info(
                zone,
                n,
                migs.get(n),
                templates.get(n),
                policies.get(n),
                sorted(members.get(n, []), key=lambda v: str(v.name)),
            )
            for n in sorted(names)
        ]
        return nodes, loose

    def _vms(self, zone: str, name: str) -> list[Any]:
        listed = self.reads.instances(zone, f'(labels.{body.SLICE_LABEL} = "{name}")')
        found = [v for v in listed if dict(v.labels).get(body.SLICE_LABEL) == name]
        return sorted(found, key=lambda v: str(v.name))  # the stable worker order

    def gone(self, zone: str, name: str) -> bool:
        """Verified: no part answers a read, the zone's MIG list lacks it, no VM of it is left
        (the three asked at once)."""
        found, migs, vms = at_once(
            lambda: self.get(zone, name),
            lambda: _none_if_unserved(self.reads.migs, zone),
            lambda: self._vms(zone, name),
        )
        held = any(m.name == name and mig_is_ours(m, name) for m in migs)
        return found is None and not held and not vms  # its requests lived in its MIG

    def parts(self, zone: str, name: str) -> list[Part]:
        """Its VMs (as nodes) still listed, its template and its policy."""
        region = body.region_of(zone)
        vms = [Part(body.VM, zone, str(v.name)) for v in self._vms(zone, name)]
        return [
            *vms,
            Part(body.TEMPLATE, region, body.template_name(name)),
            Part(body.POLICY, region, body.policy_name(name)),
        ]

    def part_labels(self, part: Part) -> dict[str, str] | None:
        """A template's or policy's labels (from its note), None when it is gone."""
        if part.kind == body.TEMPLATE:
            template = self.reads.template(part.zone, part.name)
            return dict(template.properties.labels) if template is not None else None
        found = self.reads.policy(part.zone, part.name)
        note = body.read_note(found.description or "") if found is not None else None
        return (note.labels if note else {}) if found is not None else None

    def part_gone(self, part: Part) -> bool:
        return self.part_labels(part) is None


def _none_if_unserved(list_kind: Callable[[str], list[Any]], where: str) -> list[Any]:
    """A list; a server that does not serve the route (404) has none of the kind."""
    from google.api_core import exceptions

    try:
        return list_kind(where)
    except exceptions.NotFound:
        return []


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
