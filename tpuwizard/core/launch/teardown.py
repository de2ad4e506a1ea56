"""Verified teardown and reconciliation: what may still bill, and making sure it does not.

A resource is gone only when its delete finished *and* ``get`` says NotFound *and* the zone's list
no longer holds it; only then does the ledger say ``gone``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tpuwizard.core.cloud.client import TpuCloud
from tpuwizard.core.cloud.diagnose import Context, Diagnosis, diagnose
from tpuwizard.core.cloud.types import MANAGED_BY, RUN_LABEL
from tpuwizard.core.launch.ledger import Ledger, Resource
from tpuwizard.core.plan import cost


@dataclass(frozen=True)
class TeardownResult:
    resource: Resource
    verified: bool
    diagnosis: Diagnosis | None = None


def delete_and_verify(
    cloud: TpuCloud, ledger: Ledger, resource: Resource, attempts: int = 3, pause: float = 2.0
) -> TeardownResult:
    """Delete ``resource`` (a queued resource takes its node with it) and verify it is gone."""
    last: Diagnosis | None = None
    for attempt in range(attempts):
        try:
            if resource.kind == "queued":
                cloud.delete_queued(resource.zone, resource.name)
                gone = cloud.queued_gone(resource.zone, resource.name) and (
                    not resource.node_id or cloud.node_gone(resource.zone, resource.node_id)
                )
            else:
                cloud.delete_node(resource.zone, resource.name)
                gone = cloud.node_gone(resource.zone, resource.name)
            if gone:
                ledger.record("gone", resource)
                return TeardownResult(resource, True)
            last = Diagnosis(
                "not_gone",
                f"{resource.name} is still listed",
                "The delete finished but the TPU API still lists it.",
                [f"Run tpuwizard teardown {resource.name} again in a minute."],
            )
        except Exception as err:  # diagnosed below; teardown must never stop on one error
            last = diagnose(
                err,
                Context(
                    project=resource.project,
                    zone=resource.zone,
                    accelerator=resource.accelerator,
                    name=resource.name,
                ),
            )
        if attempt + 1 < attempts:
            time.sleep(pause)
    return TeardownResult(resource, False, last)


@dataclass(frozen=True)
class Billable:
    """Something that exists (or may) and may bill, as ``status`` shows it."""

    resource: Resource
    state: str
    age_s: float
    cost_usd: float | None
    source: str  # "ledger", "labels" or "ledger+labels"

    def to_dict(self) -> dict[str, object]:
        r = self.resource
        return {
            "name": r.name,
            "kind": r.kind,
            "zone": r.zone,
            "project": r.project,
            "accelerator": r.accelerator,
            "route": r.route,
            "run_id": r.run_id,
            "state": self.state,
            "age_s": round(self.age_s, 1),
            "cost_usd": self.cost_usd,
            "source": self.source,
        }


def reconcile(cloud: TpuCloud, ledger: Ledger, zones: list[str] | None = None) -> list[Billable]:
    """Ledger records plus every resource labelled managed-by=tpuwizard, checked live.

    Ledger entries the API no longer knows are verified gone and recorded so.
    """
    now = time.time()
    found: dict[tuple[str, ...], Billable] = {}
    for entry in ledger.open_entries():
        r = entry.resource
        if r.project != cloud.project:
            continue
        info = (
            cloud.get_queued(r.zone, r.name)
            if r.kind == "queued"
            else cloud.get_node(r.zone, r.name)
        )
        if info is None:
            verified = (
                cloud.queued_gone(r.zone, r.name)
                if r.kind == "queued"
                else cloud.node_gone(r.zone, r.name)
            )
            if verified:
                ledger.record("gone", r, reconciled=True)
            continue
        age = now - entry.first_at
        found[r.key] = Billable(
            r, info.state, age, cost.estimate(r.accelerator, r.route, age), "ledger"
        )
    for billable in _labelled(cloud, zones, now):
        key = billable.resource.key
        if key in found:
            found[key] = Billable(
                found[key].resource,
                found[key].state,
                found[key].age_s,
                found[key].cost_usd,
                "ledger+labels",
            )
        elif not _owned_by_queued(billable, found):
            found[key] = billable
    return sorted(found.values(), key=lambda b: (b.resource.zone, b.resource.name))


def _owned_by_queued(billable: Billable, found: dict) -> bool:
    """A node that belongs to a listed queued resource is shown as that request."""
    r = billable.resource
    return r.kind == "node" and any(
        b.resource.kind == "queued" and b.resource.node_id == r.name and b.resource.zone == r.zone
        for b in found.values()
    )


def _labelled(cloud: TpuCloud, zones: list[str] | None, now: float) -> list[Billable]:
    zones = zones if zones is not None else cloud.list_zones()

    def survey(zone: str) -> list[Billable]:
        out = []
        for q in cloud.list_queued(zone):
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
                )
                age = now - (q.create_time or now)
                out.append(
                    Billable(
                        res, q.state, age, cost.estimate(q.accelerator_type, route, age), "labels"
                    )
                )
        for n in cloud.list_nodes(zone, MANAGED_BY):
            route = "spot" if n.spot else "vm"
            res = Resource(
                "node",
                cloud.project,
                zone,
                n.name,
                n.accelerator_type,
                n.labels.get(RUN_LABEL, "?"),
                route,
            )
            age = now - (n.create_time or now)
            out.append(
                Billable(res, n.state, age, cost.estimate(n.accelerator_type, route, age), "labels")
            )
        return out

    with ThreadPoolExecutor(max_workers=16) as pool:
        return [b for chunk in pool.map(survey, zones) for b in chunk]
