"""The survey by label: every resource labelled managed-by=tpuwizard, as :func:`reconcile`
(verified.py) reads it beside the ledger's records, and what ``status`` shows of each.

Zone by zone (each zone's queued resources and nodes at once, the zones at once), or, from a
cloud that lists every zone in one go (:class:`SurveysEverywhere`: Compute Engine's aggregated
lists), in one round trip with no list of zones first. A zone that fails is ``skipped`` (with
why) and the others still answer; a zone Google could not reach is skipped, never empty.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tpuwizard.core.cloud.ai_zones import with_ai_zones
from tpuwizard.core.cloud.backends import VIA_AUTO, VIA_RESIZE_REQUEST
from tpuwizard.core.cloud.compute.slice_body import is_single_vm, region_of
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.google_calls import at_once
from tpuwizard.core.cloud.protocol import Cloud, SurveysEverywhere
from tpuwizard.core.cloud.types import MANAGED_BY, OWNER_LABEL, RUN_LABEL, NodeInfo
from tpuwizard.core.launch.records.billable import Billable
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan import cost

# Why a zone the survey could not reach is not searched (its resources may still bill).
UNREACHABLE = "not checked: Google's list could not reach it ({why})"


def billable(
    cloud: Cloud,
    resource: Resource,
    state: str,
    age: float,
    source: str,
    kept: bool = False,
    parts: tuple[str, ...] = (),
) -> Billable:
    """What ``status`` shows of a live resource, billing by its cloud's own rule."""
    bills = cloud.bills_in_state(resource.kind, state)
    # Nothing while its state bills nothing (CREATING, waiting for capacity), else the price
    # over its age (its READY time is not known from a listing).
    cost_usd = cost.estimate(resource.slice, resource.route, age, resource.zone) if bills else 0.0
    return Billable(resource, state, age, cost_usd, source, kept=kept, bills=bills, parts=parts)


def labelled(
    cloud: Cloud, zones: list[str] | None, now: float
) -> tuple[list[Billable], dict[str, str], set[str]]:
    """What the survey by label found, the zones skipped (zone -> why), and of those the zones
    Google says this project may not use."""
    if isinstance(cloud, SurveysEverywhere):
        surveyed = cloud.survey_everywhere(MANAGED_BY)
        wanted = set(zones) if zones is not None else None
        found = [
            _node(cloud, zone, n, now)
            for zone, nodes in surveyed.nodes.items()
            if wanted is None or zone in wanted
            for n in nodes
        ]
        skipped = {
            where: UNREACHABLE.format(why=why)
            for where, why in surveyed.unreachable.items()
            if wanted is None or where in wanted | {region_of(z) for z in wanted}
        }
        refused: set[str] = set()
        for zone, err in surveyed.failed.items():  # a zone listed alone, as zone by zone
            if wanted is None or zone in wanted:
                d = diagnose(err, Context(project=cloud.project, zone=zone))
                skipped[zone] = d.title
                if d.kind == "zone_unavailable":
                    refused.add(zone)
        return found, skipped, refused
    return _zone_by_zone(cloud, zones, now)


def _zone_by_zone(
    cloud: Cloud, zones: list[str] | None, now: float
) -> tuple[list[Billable], dict[str, str], set[str]]:
    # The AI zones too: a zone list hides them unless visible, but a launch may name one.
    zones = zones if zones is not None else with_ai_zones(cloud.list_zones())

    def survey(zone: str) -> list[Billable]:
        out = []
        queued, nodes = at_once(
            lambda: cloud.list_queued(zone), lambda: cloud.list_nodes(zone, MANAGED_BY)
        )
        for q in queued:
            if q.labels.get("managed-by") == MANAGED_BY["managed-by"]:
                route = "flex" if q.flex else "spot"
                res = Resource(
                    "queued",
                    cloud.project,
                    zone,
                    q.name,
                    q.accelerator_type,
                    q.labels.get(RUN_LABEL, "?"),
                    route,
                    q.node_id,
                    q.labels.get(OWNER_LABEL),
                    cloud.backend,
                )
                age = now - (q.create_time or now)
                out.append(billable(cloud, res, q.state, age, "labels"))
        return out + [_node(cloud, zone, n, now) for n in nodes]

    found: list[Billable] = []
    skipped: dict[str, str] = {}
    refused: set[str] = set()
    # Every zone at once: with fewer workers than zones (there are 20 and more), the last
    # zones wait for the first to answer, one round trip more.
    with ThreadPoolExecutor(max_workers=max(1, len(zones))) as pool:
        futures = {zone: pool.submit(survey, zone) for zone in zones}
        for zone, future in futures.items():
            try:
                found += future.result()
            except Exception as err:  # one zone failing must not hide the others
                d = diagnose(err, Context(project=cloud.project, zone=zone))
                skipped[zone] = d.title
                if d.kind == "zone_unavailable":
                    refused.add(zone)
    if skipped and len(skipped) == len(zones):
        raise next(iter(futures.values())).exception()  # type: ignore[misc]
    return found, skipped, refused


def _node(cloud: Cloud, zone: str, n: NodeInfo, now: float) -> Billable:
    route = "flex" if n.flex else "spot" if n.spot else "vm"
    res = Resource(
        "node",
        cloud.project,
        zone,
        n.name,
        n.accelerator_type,
        n.labels.get(RUN_LABEL, "?"),
        route,
        owner=n.labels.get(OWNER_LABEL),
        backend=cloud.backend,
        # A single-host TPU made of parts is the course's Route 2B (its MIG's request).
        via=VIA_RESIZE_REQUEST if n.parts and is_single_vm(n.accelerator_type) else VIA_AUTO,
    )
    age = now - (n.create_time or now)
    return billable(cloud, res, n.state, age, "labels", parts=n.parts)
