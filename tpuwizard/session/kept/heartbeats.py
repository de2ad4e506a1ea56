"""Heartbeats from an open front end (the wizard) to every kept node this install knows of.

A node kept by ``tpuwizard up`` deletes itself once its heartbeat file has not changed for its
idle time. While the wizard is open the user is still working, so a worker thread sends each kept
node a heartbeat at the cadence ``run`` uses (idle/4 s, at most 60 s), and notes each kept node,
with its last heartbeat, in the session's :class:`BillingState` (the status bar shows it, with
its cost and its idle deadline). A node that cannot be reached is reported, never raised.

Each round reads the ledger and each node's zone listing first: a node that left either (``down``
in another terminal, its watchdog, a preemption, the console) leaves the billing state in that
round, so the bar, the meter, the quit guard and the parting words (which all read it) drop it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.records.billing_state import Billed
from tpuwizard.core.launch.workers.heartbeat import heartbeat_interval
from tpuwizard.session.kept.lines import node_id

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.ledger import Entry
    from tpuwizard.session.kept.nodes import KeptNode
    from tpuwizard.session.session import Session

IDLE_CHECK_S = 60.0  # with no kept node, how often the ledger is read again for a new one
LONGEST_BEAT_S = 60.0  # the longest wait between two rounds (a test sets a shorter one)


class KeptHeartbeats:
    """A thread that keeps every kept node alive until :meth:`stop`."""

    def __init__(
        self,
        session: Session,
        on_problem: Callable[[str], None],
        on_change: Callable[[], None] = lambda: None,
        longest_s: float = LONGEST_BEAT_S,
    ) -> None:
        self.session = session
        self.on_problem, self.on_change = on_problem, on_change
        self.longest_s = longest_s
        self._stop = threading.Event()
        self._nodes: dict[str, KeptNode] = {}  # opened once: each holds its transport
        self._said: dict[str, str] = {}  # the last problem reported per node (said once)
        self._noted: set[str] = set()  # the kept nodes these heartbeats put in the billing state
        self.rounds = 0  # rounds ended (a test waits on it, never on a fixed sleep)
        self._thread: threading.Thread | None = None

    def start(self) -> KeptHeartbeats:
        self._thread = threading.Thread(
            target=self._loop, name="tpuwizard-kept-heartbeats", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 0.0) -> None:
        """No more heartbeats (the beat in flight, if any, still ends by itself)."""
        self._stop.set()
        if self._thread is not None and timeout > 0:
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            interval = self.beat_once()
            if self._stop.wait(interval):
                return

    def beat_once(self) -> float:
        """One heartbeat to each kept node; returns the seconds until the next round."""
        try:
            entries = self.session.kept.entries()
        except Exception as err:  # an unreadable ledger: say so and try again later
            self._say("ledger", f"could not read the kept nodes: {err}")
            return IDLE_CHECK_S
        names = {node_id(e.resource) for e in entries}
        for gone in set(self._nodes) - names:
            del self._nodes[gone]
        for left in self._noted - names:  # left the ledger (`down` elsewhere): off every view
            self.session.billing.forget(left)
        self._noted &= names
        intervals = [IDLE_CHECK_S, self.longest_s]
        for entry in entries:
            if self._stop.is_set():
                break
            intervals.append(heartbeat_interval(KeptRecord.of(entry).idle_s))
            if self._listed(entry):
                self._beat(entry)
        self.rounds += 1
        self.on_change()
        return min(intervals)

    def _listed(self, entry: Entry) -> bool:
        """Its zone's listing still has it (or could not be read: it may exist, so it keeps
        showing). One the listing lacks leaves the meter, the bar and the quit guard now, and
        its run folder and ledger record close (:meth:`KeptNodes.settle`)."""
        name = node_id(entry.resource)
        if self._gone(entry):
            self._nodes.pop(name, None)
            self._noted.discard(name)
            self.session.billing.forget(name)
            try:
                self.session.kept.settle(name, "heartbeat")
            except Exception as err:  # the listing said gone: the views hold that already
                self._say(name, f"{name}: gone, but its records could not be closed: {err}")
            return False
        return True

    def _beat(self, entry: Entry) -> None:
        name = node_id(entry.resource)
        try:
            node = self._nodes.get(name)
            if node is None:
                node = self._nodes[name] = self.session.kept.open(name)
            node.heartbeat()
        except Exception as err:  # shown by the front end; the next round tries again
            self._nodes.pop(name, None)  # gone or unreachable: find it afresh next time
            self._say(name, f"{name}: heartbeat not sent: {err}")
            return
        self._said.pop(name, None)
        self._noted.add(name)
        self.session.billing.note_kept(self._billed(entry, time.time()))

    def _gone(self, entry: Entry) -> bool:
        try:
            cloud = self.session.cloud_for(entry.resource.backend)
            return cloud.get_node(entry.resource.zone, node_id(entry.resource)) is None
        except Exception:  # unreachable: it may still exist, so it keeps showing
            return False

    def _billed(self, entry: Entry, beat_at: float) -> Billed:
        r, record = entry.resource, KeptRecord.of(entry)
        beats = self.session.kept.book.read()  # when the beat was sent, noted by the node
        return Billed(
            node_id(r),
            "node",
            r.zone,
            r.accelerator,
            r.route,
            entry.first_at,
            entry.first_at,  # priced from its first record, as `status` prices it
            state="READY",
            kept_since=record.kept_at,
            idle_s=record.idle_s,
            max_deadline=record.deadline,
            last_heartbeat=beats.get(node_id(r), beat_at),
            deadline_by_google=r.backend == COMPUTE and record.ended_by_google,
        )

    def _say(self, key: str, message: str) -> None:
        if self._said.get(key) != message:
            self._said[key] = message
            self.on_problem(message)
