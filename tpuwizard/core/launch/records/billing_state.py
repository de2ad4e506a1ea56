"""What may bill now: one fold of the lifecycle events plus leftovers from earlier runs.

Two facts per resource, as Google bills them:

* it **exists** (and must be cleaned up) from the create call until it is verified gone;
* it **costs money** from its first READY until it is verified gone. A queued resource that waits
  for capacity has no VM and costs nothing (google-behaviour.md, "Billing").

Front ends never infer billing from the event stream themselves: the meter, the quit guard, the
plain mode and the CLI summary all read a :class:`BillingState`.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from tpuwizard.core.deadlines import idle_deadline

if TYPE_CHECKING:
    # Imported where used: the wizard's first screen shows a meter before any event exists,
    # and the events' dataclasses and the price catalog take longer to import than it to draw.
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.plan.catalog import Slice


@dataclass(frozen=True)
class Billed:
    """One resource that exists, seen from this session."""

    name: str
    kind: str  # "node" or "queued"
    zone: str
    accelerator: str
    route: str
    exists_since: float
    costing_since: float | None = None  # first READY; None while it waits or is being made
    stopped_billing: bool = False  # it billed, and no longer does (gone, or taken by Google)
    leftover: bool = False  # from an earlier run, found in the ledger or by labels
    kept: bool = False  # the user chose to leave it running
    left: bool = False  # a leftover the user chose to leave running for now
    state: str = ""
    # A node kept for iterating (``tpuwizard up``): when it was kept, its watchdog's idle time,
    # its --max-run deadline, and the last heartbeat this computer sent it.
    kept_since: float | None = None
    idle_s: float | None = None
    max_deadline: float | None = None
    last_heartbeat: float | None = None
    # max_deadline is Google's own, read back from the cloud (Compute Engine's max run
    # duration): Google deletes it then, with no watchdog of ours.
    deadline_by_google: bool = False

    @cached_property
    def slice(self) -> Slice:
        """Its accelerator type, parsed: the name comes from a launch's events or a ledger
        record (what the front ends are handed), as their JSON carries it."""
        from tpuwizard.core.plan import catalog

        return catalog.parse_accelerator(self.accelerator)

    def idle_deadline(self) -> float | None:
        """When the watchdog deletes it without another heartbeat (None: not a kept node with
        an idle time)."""
        if self.kept_since is None:
            return None
        return idle_deadline(self.kept_since, self.idle_s, self.last_heartbeat, self.max_deadline)

    def seconds_to_idle_deadline(self, now: float | None = None) -> float | None:
        """Seconds left before that deletion (0 once it has passed)."""
        deadline = self.idle_deadline()
        if deadline is None:
            return None
        return max(0.0, deadline - (now if now is not None else time.time()))

    def cost_usd(self, now: float | None = None) -> float | None:
        """The estimate so far: zero until it costs, then chips x price x time."""
        if self.costing_since is None:
            return 0.0
        from tpuwizard.core.plan import cost

        return cost.estimate(self.slice, self.route, self.costing_s(now), self.zone)

    def cost_at_most_usd(self, now: float | None = None) -> float | None:
        """The most it has cost so far: the estimate where the catalog has a price; for
        Flex-start, which has none, on-demand's (``cost.at_most``)."""
        if self.costing_since is None:
            return 0.0
        from tpuwizard.core.plan import cost

        return cost.at_most(self.slice, self.route, self.costing_s(now), self.zone)

    def costing_s(self, now: float | None = None) -> float:
        if self.costing_since is None:
            return 0.0
        return max(0.0, (now if now is not None else time.time()) - self.costing_since)

    def age_s(self, now: float | None = None) -> float:
        return max(0.0, (now if now is not None else time.time()) - self.exists_since)

    @property
    def needs_decision(self) -> bool:
        """Quitting must ask about it: nobody has said to keep or leave it."""
        return not (self.kept or self.left)


class BillingState:
    """The resources that exist, folded from events (this run) and reconciliation (leftovers)."""

    def __init__(self) -> None:
        # By (name, zone): with --fan-out one name is requested in several zones at once.
        self._items: dict[tuple[str, str], Billed] = {}
        self._planned: ev.Planned | None = None
        # Whether earlier runs' resources are known: "not asked" (a launch from the command
        # line, which reconciles on its own), "checking", "known", or "unknown" (the check failed).
        self.leftovers = "not asked"
        # What this launch's resources verified gone cost (a spot chain's earlier attempts,
        # --fan-out's other requests): the meter counts them beside what bills now.
        self.gone_cost_usd = 0.0

    # -- reading ----------------------------------------------------------------------------
    def existing(self) -> list[Billed]:
        """Everything that may exist and must be cleaned up (or was deliberately kept)."""
        return list(self._items.values())

    def costing(self) -> list[Billed]:
        """What costs money right now."""
        return [b for b in self._items.values() if b.costing_since is not None]

    def undecided(self) -> list[Billed]:
        """What quitting must ask about: existing, and neither kept nor left on purpose."""
        return [b for b in self._items.values() if b.needs_decision]

    def may_bill(self) -> bool:
        return bool(self._items)

    def made_here(self) -> list[Billed]:
        """What this session was creating, or made and did not keep: what a stop signal
        deletes. A node kept on purpose (in this session or an earlier run) stays kept, and an
        earlier run's leftover is not this run's to delete unasked."""
        return [b for b in self._items.values() if not (b.leftover or b.kept or b.kept_since)]

    def cost_usd(
        self, now: float | None = None, without: Collection[str] = (), at_most: bool = False
    ) -> float | None:
        """This session's estimate across everything that costs now (None if a price is
        unknown), less the resources named in ``without``; with ``at_most``, the most it can
        have cost (:meth:`Billed.cost_at_most_usd`)."""
        total = 0.0
        for item in self.costing():
            if item.name in without:
                continue
            part = item.cost_at_most_usd(now) if at_most else item.cost_usd(now)
            if part is None:
                return None
            total += part
        return round(total, 2)

    def kept_nodes(self) -> list[Billed]:
        """The nodes kept for iterating that this session knows of (they bill until deleted),
        the nearest idle deadline first."""
        kept = [b for b in self._items.values() if b.kept_since is not None]
        return sorted(kept, key=lambda b: b.idle_deadline() or float("inf"))

    def get(self, name: str) -> Billed | None:
        """The resource called ``name`` (this run's before a leftover, where one name is in
        several zones)."""
        found = [b for b in self._items.values() if b.name == name]
        return min(found, key=lambda b: b.leftover) if found else None

    def _keys(self, name: str, zone: str = "") -> list[tuple[str, str]]:
        """The items an event names: exactly, when it says its zone; else every one so called."""
        if zone:
            return [(name, zone)] if (name, zone) in self._items else []
        return [key for key in self._items if key[0] == name]

    # -- folding ----------------------------------------------------------------------------
    def apply(self, event: ev.Event) -> None:
        """Fold one lifecycle event."""
        from tpuwizard.core.launch.events import launch_events as ev

        match event:
            case ev.Planned():
                self._planned = event
                self.gone_cost_usd = 0.0  # a new launch
            case ev.ResourceExists():
                self._items[(event.name, event.zone)] = Billed(
                    event.name,
                    event.kind,
                    event.zone,
                    event.accelerator,
                    event.route,
                    time.time(),
                    state="CREATING",
                )
            case ev.CreateRefused():
                self._pop(event.name, event.zone)
            case ev.BillingStarted():
                self._update(event.name, event.zone, costing_since=event.since, state="READY")
            case ev.BillingStopped():
                self._update(event.name, event.zone, costing_since=None, stopped_billing=True)
            case ev.TeardownVerified():
                ours = any(not self._items[k].leftover for k in self._keys(event.name, event.zone))
                if ours and event.cost_usd:
                    self.gone_cost_usd = round(self.gone_cost_usd + event.cost_usd, 4)
                self._pop(event.name, event.zone)
            case ev.Kept():
                self._update(event.name, event.zone, kept=True)
            case ev.Provisioning():
                for key, item in list(self._items.items()):
                    here = not event.zone or item.zone == event.zone
                    if here and not item.leftover and item.costing_since is None:
                        self._items[key] = replace(item, state=event.state)
            case _:
                pass

    def _update(self, name: str, zone: str = "", **changes: object) -> None:
        for key in self._keys(name, zone):
            self._items[key] = replace(self._items[key], **changes)  # type: ignore[arg-type]

    def _pop(self, name: str, zone: str = "") -> None:
        for key in self._keys(name, zone):
            del self._items[key]

    def expect_leftovers(self) -> None:
        """A check for earlier runs' resources has started: until it answers, what bills is not
        known, and the meter says so rather than "nothing"."""
        self.leftovers = "checking"

    def leftover_check_failed(self) -> None:
        self.leftovers = "unknown"

    def add_leftovers(self, found: Iterable[Billable]) -> None:
        """Resources from earlier runs that still exist: they count until deleted or left."""
        self.leftovers = "known"
        now = time.time()
        for b in found:
            r = b.resource
            if (r.name, r.zone) in self._items:
                continue
            since = now - b.age_s
            # A listed resource we cannot see the READY time of is treated as costing since it
            # was created, unless its state says nothing is charged yet.
            waiting = not b.billing
            self._items[(r.name, r.zone)] = Billed(
                r.name,
                r.kind,
                r.zone,
                r.accelerator,
                r.route,
                since,
                None if waiting else since,
                leftover=True,
                kept=b.kept,  # kept on purpose earlier: it bills, and nobody need be asked
                state=b.state,
            )

    def note_kept(self, item: Billed) -> None:
        """A node kept for iterating exists (found in the ledger and the API): it bills, and
        nobody need be asked about it (``kept``)."""
        known = self._items.get((item.name, item.zone))
        if known is not None and known.last_heartbeat and item.last_heartbeat:
            item = replace(item, last_heartbeat=max(known.last_heartbeat, item.last_heartbeat))
        self._items[(item.name, item.zone)] = replace(item, kept=True)

    def heartbeat_sent(self, name: str, at: float) -> None:
        """A heartbeat reached the kept node ``name`` at ``at``: its idle deadline moves."""
        for key in self._keys(name):
            item = self._items[key]
            if (item.last_heartbeat or 0.0) < at:
                self._items[key] = replace(item, last_heartbeat=at)

    def leave(self, names: Iterable[str]) -> None:
        """The user chose to leave these leftovers running: still billing, no longer asked."""
        for name in names:
            self._update(name, left=True)

    def forget(self, name: str, zone: str = "") -> None:
        """Verified gone outside a launch (a teardown of leftovers); ``zone``: only there."""
        self._pop(name, zone)
