"""Verified teardown and reconciliation: what may still bill, and making sure it does not.

A resource is gone only when its delete finished *and* ``get`` says NotFound *and* the zone's list
no longer holds it; only then does the ledger say ``gone``. Nothing is deleted before its labels
were read and found to be the very instance the record describes (:mod:`.ownership`): when the
name is held by someone else's resource, ours is not there, and theirs is left alone.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.diagnose.failure import api_name
from tpuwizard.core.cloud.protocol import Cloud, Part
from tpuwizard.core.cloud.types import OWNER_LABEL, NodeInfo
from tpuwizard.core.launch.records.billable import Billable
from tpuwizard.core.launch.records.ledger import Entry, Ledger, Resource
from tpuwizard.core.launch.records.ownership import held_by, is_instance, live_labels
from tpuwizard.core.launch.teardown import labelled as by_label
from tpuwizard.core.launch.teardown.by_hand import ZONE_LEVEL, check_failed, manual_command

if TYPE_CHECKING:  # the events (~0.1 s to import) are not needed to survey what may bill
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.records.ledger_file import Held


@dataclass(frozen=True)
class TeardownResult:
    resource: Resource
    verified: bool
    diagnosis: Diagnosis | None = None
    # Set when the name was held by another instance (not this record's): nothing was deleted,
    # and this record's own instance is gone (the name cannot be held twice). Who, in words,
    # and the holder's owner label (None: no owner label, or nothing held the name).
    held_by: str | None = None
    holder_owner: str | None = None
    # Verified gone and it logged in through OS Login: what became of the key (session/login.py).
    login_key: ev.LoginKeyForgotten | None = None
    # Its ``gone`` record, refused by this computer's disk: held, and where (said beside the
    # verdict, which is the cloud's list's, never the record's).
    held: Held | None = None


# Google refuses a delete for a while right after create ("not in a deletable state"; its own
# sample loops for minutes, reference/google-behaviour.md): keep asking for this long.
NOT_DELETABLE_WAIT_S = 600.0


def delete_and_verify(
    cloud: Cloud,
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
            labels = live_labels(cloud, resource)
            if labels is not None and not is_instance(labels, resource):
                # The name is taken by another instance, so this record's is not there: say so
                # in the ledger and leave the other one alone (a 409 is not ownership).
                holder = held_by(labels)
                held = ledger.record("gone", resource, name_held_by=holder)
                owner = labels.get(OWNER_LABEL)
                return TeardownResult(resource, True, None, holder, owner, held=held)
            _delete_when_deletable(cloud, ledger, resource, wait)
            if _whole_gone(cloud, resource):
                return TeardownResult(resource, True, held=ledger.record("gone", resource))
            last = still_listed(resource)
        except Exception as err:  # diagnosed below; teardown must never stop on one error
            last = check_failed(err, resource)
            if last.kind in ZONE_LEVEL:  # the zone refuses: asking again will not change that
                break
        if attempt + 1 < attempts:
            time.sleep(pause)
    return TeardownResult(resource, False, last)


def _whole_gone(cloud: Cloud, resource: Resource) -> bool:
    """The resource is verified gone, and so is every part its delete takes with it."""
    r = resource
    gone = (
        cloud.queued_gone(r.zone, r.name) if r.kind == "queued" else cloud.node_gone(r.zone, r.name)
    )
    return gone and all(
        _part_gone(cloud, resource, part)
        for part in cloud.parts_of(r.kind, r.zone, r.name, r.node_id, r.accelerator)
    )


def _part_gone(cloud: Cloud, resource: Resource, part: Part) -> bool:
    """A part (a queued request's node, a slice's VM, template or policy) is gone, or its name
    is held by one that is not its own (someone else's, made before; it never got it)."""
    if part.kind != "node":
        labels = cloud.part_labels(part)
        if labels is not None:
            return not is_instance(labels, resource)
        return cloud.part_gone(part)
    node = cloud.get_node(part.zone, part.name)
    if node is not None:
        return not is_instance(node.labels, resource)
    return cloud.node_gone(part.zone, part.name)


@dataclass(frozen=True)
class Unchecked:
    """A ledger record whose zone could not be read: it may still exist and bill."""

    resource: Resource
    diagnosis: Diagnosis

    def to_dict(self) -> dict[str, object]:
        r = self.resource
        return {
            "name": r.name,
            "kind": r.kind,
            "zone": r.zone,
            "run_id": r.run_id,
            "diagnosis": self.diagnosis.to_dict(),
        }


def still_listed(resource: Resource) -> Diagnosis:
    """A delete that finished while the TPU API still lists the resource."""
    return Diagnosis(
        "not_gone",
        f"{resource.name} is still listed",
        f"The delete finished but {api_name(resource.backend)} still lists it.",
        [
            f"Run tpuwizard teardown {resource.name} again in a minute.",
            f"Or by hand: {manual_command(resource)}",
        ],
    )


def _delete_when_deletable(cloud: Cloud, ledger: Ledger, resource: Resource, wait: float) -> None:
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
            if not cloud.not_deletable_yet(err) or time.monotonic() >= deadline:
                raise
            if not pending:
                ledger.record("delete_pending", resource, reason="not in a deletable state yet")
                pending = True
            time.sleep(max(0.0, min(delay, deadline - time.monotonic())))
            delay = min(delay * 2, 30.0)


class Found(list[Billable]):
    """What :func:`reconcile` found of this install's, the zones it could not survey (zone ->
    why), the ledger records it could not check (``unchecked``), and apart, in ``others``, what
    other tpuwizard users (other owners) made."""

    def __init__(
        self,
        items: list[Billable],
        skipped: dict[str, str] | None = None,
        others: list[Billable] | None = None,
        unchecked: list[Unchecked] | None = None,
    ) -> None:
        super().__init__(items)
        self.skipped: dict[str, str] = dict(skipped or {})
        # Of those, the zones Google says this project may not use: the same answer each time,
        # and nothing can be there (the command says it once, not as a problem).
        self.refused: set[str] = set()
        self.others: list[Billable] = list(others or [])
        self.unchecked: list[Unchecked] = list(unchecked or [])
        # Ledger lines that could not be read: (line number, why), and where they were kept.
        self.unreadable: list[tuple[int, str]] = []
        self.unreadable_kept_in: str | None = None
        # Compute Engine VMs of ours Google had stopped, deleted when found (Session).
        self.stopped_ended: list[TeardownResult] = []


def reconcile(
    cloud: Cloud, ledger: Ledger, zones: list[str] | None = None, owner: str | None = None
) -> Found:
    """Ledger records plus every resource labelled managed-by=tpuwizard, checked live.

    Ledger entries the API no longer knows are verified gone and recorded so; so are those whose
    name another instance now holds (its labels name another run). A labelled resource is
    ``mine`` when the ledger knows it or its owner label is ``owner``. Each zone is
    surveyed on its own: one that fails (Google answers 403 for zones a project may not use) is
    reported in ``skipped`` and the others still answer. A record whose zone fails is
    ``unchecked`` (with why), stays open, and the other records still count.
    """
    now = time.time()
    # The records and the labelled survey at once: each is a few requests one after another,
    # and what the user waits for is the longer of the two, not their sum.
    with ThreadPoolExecutor(max_workers=1) as pool:
        survey = pool.submit(by_label.labelled, cloud, zones, now)
        found, unchecked = _check_records(cloud, ledger, now)
        labelled, skipped, not_usable = survey.result()
    for billable in labelled:
        key = billable.resource.key
        if owner is None or billable.resource.owner != owner:
            billable = replace(billable, mine=False)
        if key in found:
            found[key] = replace(found[key], source="ledger+labels")
        elif not _owned_by_queued(billable, found):
            found[key] = billable
    ordered = sorted(found.values(), key=lambda b: (b.resource.zone, b.resource.name))
    result = Found(
        [b for b in ordered if b.mine],
        skipped,
        others=[b for b in ordered if not b.mine],
        # What the survey found after all is listed, not unchecked.
        unchecked=[u for u in unchecked if u.resource.key not in found],
    )
    result.refused = not_usable
    result.unreadable = list(ledger.unreadable)
    if result.unreadable:
        result.unreadable_kept_in = str(ledger.side_file)
    return result


def _check_records(
    cloud: Cloud, ledger: Ledger, now: float
) -> tuple[dict[tuple[str, ...], Billable], list[Unchecked]]:
    """This cloud's open records in its project, each checked live: what still exists, and
    those whose zone refused (asked once a zone, not once a record). The zones at once, each
    zone's records in turn: at 200 ms a request, records one after another add up."""
    entries = [
        e
        for e in ledger.open_entries()  # another project's, or the other backend's: not here
        if e.resource.project == cloud.project and e.resource.backend == cloud.backend
    ]
    by_zone: dict[str, list[Entry]] = {}
    for entry in entries:
        by_zone.setdefault(entry.resource.zone, []).append(entry)

    def check_zone(zone_entries: list[Entry]) -> list[tuple[Billable | None, Exception | None]]:
        answers: list[tuple[Billable | None, Exception | None]] = []
        err: Exception | None = None  # the zone's first error: its other records wait
        for entry in zone_entries:
            if err is None:
                try:
                    answers.append((_check_record(cloud, ledger, entry, now), None))
                    continue
                except Exception as failed:  # this zone's error is said on its own line
                    err = failed
            answers.append((None, err))
        return answers

    with ThreadPoolExecutor(max_workers=max(1, len(by_zone))) as pool:
        answered = dict(zip(by_zone, pool.map(check_zone, by_zone.values()), strict=True))
    found: dict[tuple[str, ...], Billable] = {}
    unchecked: list[Unchecked] = []
    for entry in entries:  # in the ledger's order, each zone's answers in theirs
        billable, err = answered[entry.resource.zone].pop(0)
        if err is not None:
            unchecked.append(Unchecked(entry.resource, check_failed(err, entry.resource)))
        elif billable is not None:
            found[entry.resource.key] = billable
    return found, unchecked


def _check_record(cloud: Cloud, ledger: Ledger, entry: Entry, now: float) -> Billable | None:
    """One open ledger record against the API: what still exists, or None once it is verified
    gone (or its name is another instance's) and recorded so."""
    r = entry.resource
    queued = r.kind == "queued"
    # Whether it is verified gone is asked beside the get, not after it: most open records
    # are of runs that ended without their last word, and at 200 ms a request the answer then
    # takes one round trip, not two. Where the get finds it, that answer is not used.
    with ThreadPoolExecutor(max_workers=1) as pool:
        gone = pool.submit(cloud.queued_gone if queued else cloud.node_gone, r.zone, r.name)
        info = cloud.get_queued(r.zone, r.name) if queued else cloud.get_node(r.zone, r.name)
        verified = gone.result() if info is None else False
    if info is not None and not is_instance(info.labels, r):
        ledger.record("gone", r, reconciled=True, name_held_by=held_by(info.labels))
        return None
    if info is None:
        if verified:
            ledger.record("gone", r, reconciled=True)
        return None
    age = now - entry.first_at
    parts = info.parts if isinstance(info, NodeInfo) else ()
    return by_label.billable(cloud, r, info.state, age, "ledger", entry.op == "kept", parts)


def check_record(cloud: Cloud, ledger: Ledger, entry: Entry) -> Billable | None:
    """One open record against the API, as :func:`reconcile` checks each (the ledger closed
    where it is verified gone or its name is another instance's); None once it is not there."""
    return _check_record(cloud, ledger, entry, time.time())


def _owned_by_queued(billable: Billable, found: dict[tuple[str, ...], Billable]) -> bool:
    """A node that belongs to a listed queued resource is shown as that request."""
    r = billable.resource
    return r.kind == "node" and any(
        b.resource.kind == "queued" and b.resource.node_id == r.name and b.resource.zone == r.zone
        for b in found.values()
    )
