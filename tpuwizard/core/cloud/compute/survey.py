"""Compute Engine's labelled survey in one round trip: every zone's instances, MIGs, and every
region's templates and workload policies, each kind in one aggregated list (compute.v1.json's
``aggregatedList``), the four asked at once, where listing zone by zone took a list of zones
first and four requests a zone. What :meth:`ComputeCloud.list_nodes` finds in one zone, this
finds in each, read and folded by the same code (compute/slice_reads.py).
"""

from __future__ import annotations

from typing import Any

from tpuwizard.core.cloud.ai_zones import with_ai_zones
from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.read import label_filter, matching, node_info
from tpuwizard.core.cloud.compute.rest import ComputeReads, Everywhere
from tpuwizard.core.cloud.compute.slice_reads import SliceReads
from tpuwizard.core.cloud.compute.views import (
    Instance,
    InstanceGroupManager,
    InstanceTemplate,
    ResourcePolicy,
)
from tpuwizard.core.cloud.google_calls import at_once
from tpuwizard.core.cloud.protocol import Surveyed
from tpuwizard.core.cloud.types import NodeInfo


def survey_everywhere(reads: ComputeReads, slices: SliceReads, labels: dict[str, str]) -> Surveyed:
    """Each zone's nodes whose labels include ``labels`` (a slice as one node, its leftover
    parts too), and the zones or regions Google could not reach, with why."""
    instances, migs, templates, policies, hidden = at_once(
        lambda: reads.everywhere(Instance, "instances", "instances", label_filter(labels)),
        lambda: _unserved_none(reads, InstanceGroupManager, "instanceGroupManagers"),
        lambda: _unserved_none(reads, InstanceTemplate, "instanceTemplates"),
        lambda: _unserved_none(reads, ResourcePolicy, "resourcePolicies"),
        lambda: _ai_zones(reads, labels),
    )
    in_zone = _by_place(instances, "zones/")
    migs_in = _by_place(migs, "zones/")
    failed: dict[str, Exception] = {}
    for zone, alone in hidden.items():
        if isinstance(alone, tuple):  # the zone's own lists: as whole as the aggregated ones
            in_zone[zone], migs_in[zone] = alone
        elif f"zones/{zone}" not in instances.scopes:  # and nothing else read it
            failed[zone] = alone
    templates_in, policies_in = _by_place(templates, "regions/"), _by_place(policies, "regions/")
    zones = {z for z, found in (*in_zone.items(), *migs_in.items()) if found}
    for region, parts in (*templates_in.items(), *policies_in.items()):
        zones |= {z for p in parts if (z := _noted_zone(p)) and body.region_of(z) == region}
    nodes: dict[str, list[NodeInfo]] = {}
    for zone in sorted(zones):
        region = body.region_of(zone)
        listed = (migs_in.get(zone, []), templates_in.get(region, []), policies_in.get(region, []))
        folded, loose = slices.fold(zone, in_zone.get(zone, []), listed)
        if found := matching([*folded, *(node_info(i, zone) for i in loose)], labels):
            nodes[zone] = found
    unreachable: dict[str, str] = {}
    for answer in (instances, migs, templates, policies):
        for scope, why in answer.unreachable.items():
            unreachable.setdefault(scope.rsplit("/", 1)[-1], why)
    return Surveyed(nodes, unreachable, failed)


def _ai_zones(
    reads: ComputeReads, labels: dict[str, str]
) -> dict[str, tuple[list[Any], list[Any]] | Exception]:
    """The AI zones' instances and MIGs, each zone listed alone, beside the aggregated lists:
    Google hides these zones from its REST API's lists until the project makes them visible
    (ai_zones.py), yet a launch may name one, so an aggregated list may leave out what is there.
    (Their regions' templates and policies are in the aggregated lists: regions are not hidden.)
    Each zone's two lists, or its error."""
    from google.api_core import exceptions

    def migs(zone: str) -> list[Any]:
        try:
            return reads.migs(zone)
        except exceptions.NotFound:  # a server that does not serve them has none
            return []

    def one(zone: str) -> tuple[list[Any], list[Any]] | Exception:
        try:
            listed, managers = at_once(
                lambda: reads.instances(zone, label_filter(labels)), lambda: migs(zone)
            )
        except Exception as err:  # this zone's answer: the caller says it was not checked
            return err
        return listed, managers

    zones = with_ai_zones([])
    answers = at_once(*(lambda z=z: one(z) for z in zones)) if zones else []
    return dict(zip(zones, answers, strict=True))


def _unserved_none(reads: ComputeReads, kind: type, path: str) -> Everywhere:
    """An aggregated list; a server that does not serve it (404) has none of the kind, as a
    zone's list is read (compute/slice_reads.py)."""
    from google.api_core import exceptions

    try:
        return reads.everywhere(kind, path, path)
    except exceptions.NotFound:
        return Everywhere([], {})


def _by_place(answer: Everywhere, prefix: str) -> dict[str, list[Any]]:
    """The items of scopes ``prefix``PLACE, by PLACE (a zone or a region; others left out:
    a survey reads regional templates, never global ones, as the zone by zone one did)."""
    out: dict[str, list[Any]] = {}
    for scope, item in answer.found:
        if scope.startswith(prefix):
            out.setdefault(scope.removeprefix(prefix), []).append(item)
    return out


def _noted_zone(part: Any) -> str:
    note = body.read_note(part.description or "")
    return note.zone if note is not None else ""
