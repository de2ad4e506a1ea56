"""``--fan-out``: send the create to every zone of ``--zones`` at once; the first READY wins.

Each request is the ordinary create of the launch's
:class:`~tpuwizard.core.launch.lifecycle.provision.Provisioner` in a thread of its own, with its
own :class:`LaunchState`: its ledger intent is written before its call is sent and its billing
events name its zone, so a crash at any moment leaves only what ``status`` and ``teardown
--all`` find, and the meter counts every request that exists. The winner's state becomes the
launch's; every other request is stopped, deleted and verified gone in its own thread while the
launch goes on, and the ending waits for them before it says what still exists. A winner never
waits for the losers' deletes: time to READY is the first zone's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch_state import LaunchState


@dataclass(frozen=True)
class FanOutInput:
    """What a fan-out reads of the plan (lifecycle/part_inputs.py makes it)."""

    node_name: str  # FanOutStarted and FanOutWon name it
    zones: tuple[str, ...]  # one request each, in --zones' order
    worst_case_hourly: float | None  # every request READY at once (zone_rules.worst_case_hourly)
    quota_checked: bool  # the preflight read quota for every request at once
    practice: bool = False  # the events' words: practice bills nothing


class ZoneCreator(Protocol):
    """What a fan-out uses of the launch's provisioner: one zone's create, and the delete of
    what a request made."""

    state: LaunchState
    cancel: CancelToken
    emit: Callable[[ev.Event], None]
    teardown: Callable[[LaunchState], bool]

    def attempt(
        self, zone: str, state: LaunchState, cancelled: Callable[[], bool] | None = None
    ) -> NodeInfo: ...


class FanOut:
    def __init__(self, given: FanOutInput, provisioner: ZoneCreator) -> None:
        self.p, self.given = provisioner, given
        self.root = provisioner.state
        self.requests = [LaunchState(zone) for zone in given.zones]
        self.winner: LaunchState | None = None
        self.errors: dict[str, BaseException] = {}
        self.lost = threading.Event()  # set at the win: every other request stops waiting
        self.settled = threading.Condition()
        self.running = len(self.requests)
        self.threads: list[threading.Thread] = []

    def provision(self) -> NodeInfo:
        """The first READY node; raises the first zone's error when none became READY (every
        request then already deleted, or left open in the ledger where that failed)."""
        p, root, given = self.p, self.root, self.given
        root.others = list(self.requests)
        root.settle_others = self.join
        p.emit(
            ev.FanOutStarted(
                given.node_name,
                [r.zone for r in self.requests],
                given.worst_case_hourly,
                given.quota_checked,  # the preflight's reading, where it was made
                given.practice,
            )
        )
        for request in self.requests:
            thread = threading.Thread(
                target=self._run, args=(request,), name=f"tpuwizard-fan-out-{request.zone}"
            )
            self.threads.append(thread)
            thread.start()
        # Not interruptible on purpose: a stop reaches every request's own wait, and each
        # request deletes what it made before its thread ends.
        with self.settled:
            self.settled.wait_for(lambda: self.winner is not None or self.running == 0)
        winner = self.winner
        if winner is None:
            self.join()
            root.zone, error = self._first_error()
            raise error
        # Copied before it leaves the others: never a moment where it is in neither.
        root.zone, root.resource, root.node = winner.zone, winner.resource, winner.node
        root.created_at, root.costing_since = winner.created_at, winner.costing_since
        root.others.remove(winner)
        losers = [r.zone for r in root.others]
        p.emit(ev.FanOutWon(given.node_name, winner.zone, losers, given.practice))
        assert winner.node is not None
        return winner.node

    def _run(self, request: LaunchState) -> None:
        try:
            self._request(request)
        finally:  # whatever happened, the launch's wait hears that this request is done
            with self.settled:
                self.running -= 1
                self.settled.notify_all()

    def _request(self, request: LaunchState) -> None:
        p = self.p
        try:
            p.attempt(request.zone, request, lambda: p.cancel.is_set() or self.lost.is_set())
        except Exception as err:
            self.errors[request.zone] = err
            p.teardown(request)  # what a stopped or failed request may have made
            return
        except BaseException as err:  # going down (KeyboardInterrupt...): the launch re-raises it
            self.errors[request.zone] = err
            return
        with self.settled:
            won = self.winner is None
            if won:
                self.winner = request
                self.lost.set()
            self.settled.notify_all()
        if not won:  # READY too, but later: it bills until verified gone, like every loser
            p.teardown(request)

    def join(self) -> None:
        """Wait until every request's thread has ended: won, or deleted (verified or not)."""
        for thread in self.threads:
            thread.join()

    def _first_error(self) -> tuple[str, BaseException]:
        """In zone order, the first error that is not just a stopped wait, and its zone."""
        ordered = [(r.zone, self.errors[r.zone]) for r in self.requests if r.zone in self.errors]
        real = [(z, e) for z, e in ordered if not isinstance(e, Cancelled)]
        return (real or ordered or [(self.root.zone, Cancelled("stopped"))])[0]
