"""A slice's reads, as the survey, ``status`` and the waits make them: its parts (a zonal MIG, a
regional template, a regional workload policy) and its VMs, through plain REST calls
(compute_rest.py), independent reads made together; read into one node by compute_slice_read.py.
:class:`ComputeSlices` (compute_slices.py) holds one as ``read`` beside its creates, waits and
deletes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud import compute_slice_body as body
from tpuwizard.core.cloud.compute_rest import ComputeReads
from tpuwizard.core.cloud.compute_slice_read import mig_is_ours, ours, slice_info
from tpuwizard.core.cloud.google_calls import at_once
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeInfo


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
