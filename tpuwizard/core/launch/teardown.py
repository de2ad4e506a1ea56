"""Verified teardown and reconciliation: what may still bill, and making sure it does not.

A resource is gone only when its delete finished *and* ``get`` says NotFound *and* the zone's list
no longer holds it; only then does the ledger say ``gone``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tpuwizard.core.cloud import google_errors
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


# Google refuses a delete for a while right after create ("not in a deletable state"; its own
# sample loops for minutes, reference/google-behaviour.md): keep asking for this long.
NOT_DELETABLE_WAIT_S = 600.0


def delete_and_verify(
    cloud: TpuCloud,
    ledger: Ledger,
    resource: Resource,
    attempts: int = 3,
    pause: float = 2.0,
    not_deletable_wait: float | None = None,
) -> TeardownResult:
    """Delete ``resource`` (a queued resource takes its node with it) and verify it is gone.

    While Google answers "not in a deletable state" the delete is asked again with backoff, for
    up to ``not_deletable_wait`` seconds (default :data:`NOT_DELETABLE_WAIT_S`), and the ledger
    says ``delete_pending`` meanwhile, so ``status`` keeps after it if this process dies.
    """
    last: Diagnosis | None = None
    wait = NOT_DELETABLE_WAIT_S if not_deletable_wait is None else not_deletable_wait
    for attempt in range(attempts):
        try:
            _delete_when_deletable(cloud, ledger, resource, wait)
            if resource.kind == "queued":
                gone = cloud.queued_gone(resource.zone, resource.name) and (
                    not resource.node_id or cloud.node_gone(resource.zone, resource.node_id)
                )
            else:
                gone = cloud.node_gone(resource.zone, resource.name)
            if gone:
                ledger.record("gone", resource)
                return TeardownResult(resource, True)
            last = Diagnosis(
                "not_gone",
                f"{resource.name} is still listed",
                "The delete finished but the TPU API still lists it.",
                [
                    f"Run tpuwizard teardown {resource.name} again in a minute.",
                    f"Or by hand: {manual_command(resource)}",
                ],
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


def manual_command(resource: Resource) -> str:
    """The gcloud command that deletes ``resource`` by hand; a queued resource with nodes needs
    ``--force`` (Google refuses it otherwise)."""
    project = f" --project {resource.project}"
    if resource.kind == "queued":
        return (
            f"gcloud compute tpus queued-resources delete {resource.name} --zone {resource.zone}"
            f"{project} --force"
        )
    return f"gcloud compute tpus tpu-vm delete {resource.name} --zone {resource.zone}{project}"


def _delete_when_deletable(
    cloud: TpuCloud, ledger: Ledger, resource: Resource, wait: float
) -> None:
    """Ask for the delete; while Google refuses it as too early, ask again with backoff."""
    deadline = time.monotonic() + wait
    delay, pending = 0.5, False
    while True:
        try:
            if resource.kind == "queued":
                cloud.delete_queued(resource.zone, resource.name)
            else:
                cloud.delete_node(resource.zone, resource.name)
            return
        except Exception as err:
            if not google_errors.not_deletable_yet(err) or time.monotonic() >= deadline:
                raise
            if not pending:
                ledger.record("delete_pending", resource, reason="not in a deletable state yet")
                pending = True
            time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, 30.0)


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


class Found(list[Billable]):
    """What :func:`reconcile` found, plus the zones it could not survey (zone -> why)."""

    def __init__(self, items: list[Billable], skipped: dict[str, str] | None = None) -> None:
        super().__init__(items)
        self.skipped: dict[str, str] = dict(skipped or {})


def reconcile(cloud: TpuCloud, ledger: Ledger, zones: list[str] | None = None) -> Found:
    """Ledger records plus every resource labelled managed-by=tpuwizard, checked live.

    Ledger entries the API no longer knows are verified gone and recorded so. Each zone is
    surveyed on its own: one that fails (Google answers 403 for zones a project may not use) is
    reported in ``skipped`` and the others still answer.
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
            r, info.state, age, cost.estimate(r.accelerator, r.route, age, r.zone), "ledger"
        )
    labelled, skipped = _labelled(cloud, zones, now)
    for billable in labelled:
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
    return Found(sorted(found.values(), key=lambda b: (b.resource.zone, b.resource.name)), skipped)


def _owned_by_queued(billable: Billable, found: dict[tuple[str, ...], Billable]) -> bool:
    """A node that belongs to a listed queued resource is shown as that request."""
    r = billable.resource
    return r.kind == "node" and any(
        b.resource.kind == "queued" and b.resource.node_id == r.name and b.resource.zone == r.zone
        for b in found.values()
    )


def _labelled(
    cloud: TpuCloud, zones: list[str] | None, now: float
) -> tuple[list[Billable], dict[str, str]]:
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
                        res,
                        q.state,
                        age,
                        cost.estimate(q.accelerator_type, route, age, zone),
                        "labels",
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
                Billable(
                    res, n.state, age, cost.estimate(n.accelerator_type, route, age, zone), "labels"
                )
            )
        return out

    found: list[Billable] = []
    skipped: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=16) as pool:
        futures = {zone: pool.submit(survey, zone) for zone in zones}
        for zone, future in futures.items():
            try:
                found += future.result()
            except Exception as err:  # one zone failing must not hide the others
                skipped[zone] = diagnose(err, Context(project=cloud.project, zone=zone)).title
    if skipped and len(skipped) == len(zones):
        raise next(iter(futures.values())).exception()  # type: ignore[misc]
    return found, skipped
