"""A kept node's idle deadline, computed in the core from its last heartbeat and its idle time,
and the wizard's heartbeats to every kept node (a failure shown, never raised)."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import pytest

from tpuwizard.core.deadlines import idle_deadline
from tpuwizard.core.launch.records.billing_state import Billed, BillingState
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.session.kept.heartbeats import IDLE_CHECK_S, KeptHeartbeats
from tpuwizard.tui.widgets.status_bar import meter_text

ZONE = "us-central1-a"


def kept(name: str = "node-a", **changes: object) -> Billed:
    fields: dict = dict(
        kept_since=1000.0, idle_s=600.0, max_deadline=None, last_heartbeat=None, state="READY"
    )
    fields.update(changes)
    return Billed(name, "node", ZONE, "v5litepod-1", "vm", 900.0, 900.0, kept=True, **fields)


def test_the_idle_time_counts_from_when_it_was_kept_before_any_heartbeat():
    assert idle_deadline(1000.0, 600.0) == 1600.0


def test_a_heartbeat_moves_the_deadline_and_an_older_one_does_not():
    assert idle_deadline(1000.0, 600.0, last_heartbeat=1300.0) == 1900.0
    assert idle_deadline(1000.0, 600.0, last_heartbeat=400.0) == 1600.0  # a beat to an old node


def test_the_max_run_deadline_comes_first_when_earlier():
    assert idle_deadline(1000.0, 600.0, last_heartbeat=1300.0, max_deadline=1700.0) == 1700.0
    assert idle_deadline(1000.0, 600.0, last_heartbeat=1300.0, max_deadline=5000.0) == 1900.0


def test_no_idle_time_means_no_idle_deadline():
    assert idle_deadline(1000.0, None, last_heartbeat=1300.0, max_deadline=1700.0) is None
    assert kept(idle_s=None).seconds_to_idle_deadline(now=1200.0) is None


def test_seconds_to_the_deadline_never_go_below_zero():
    item = kept(last_heartbeat=1100.0)
    assert item.idle_deadline() == 1700.0
    assert item.seconds_to_idle_deadline(now=1400.0) == 300.0
    assert item.seconds_to_idle_deadline(now=9999.0) == 0.0


def test_billing_state_knows_kept_nodes_nearest_deadline_first_and_heartbeats_move_them():
    state = BillingState()
    state.note_kept(kept("late", last_heartbeat=1500.0))
    state.note_kept(kept("soon"))
    assert [b.name for b in state.kept_nodes()] == ["soon", "late"]
    assert state.undecided() == []  # kept on purpose: quitting does not ask about them
    state.heartbeat_sent("soon", 1800.0)
    assert state.get("soon").idle_deadline() == 2400.0  # type: ignore[union-attr]
    state.heartbeat_sent("soon", 1200.0)  # an older beat never moves it back
    assert state.get("soon").idle_deadline() == 2400.0  # type: ignore[union-attr]
    # Noting it again (the next round) keeps the later heartbeat.
    state.note_kept(kept("soon", last_heartbeat=1700.0))
    assert state.get("soon").last_heartbeat == 1800.0  # type: ignore[union-attr]


def test_the_meter_shows_the_kept_node_its_cost_and_its_end(monkeypatch):
    import time

    state = BillingState()
    state.note_kept(kept("node-a", last_heartbeat=time.time()))
    text = meter_text(state)
    assert text.startswith("KEPT node-a ~$") and text.endswith("ends after 10m idle")
    assert "node-a" not in meter_text(state, names=False)
    assert state.cost_usd(without={"node-a"}) == 0.0


def entry(name: str, idle_s: float | None = 6.0) -> Entry:
    r = Resource("node", "p", ZONE, name, "v5litepod-1", "r1")
    return Entry(r, "kept", 1000.0, 900.0, {"idle_s": idle_s, "kept_at": 1000.0})


class FakeNode:
    def __init__(self, book: dict, name: str, fail: bool) -> None:
        self.book, self.name, self.fail = book, name, fail

    def heartbeat(self) -> None:
        if self.fail:
            raise OSError("connection refused")
        self.book[self.name] = 5000.0


def fake_session(entries: list[Entry], failing: set[str], gone: frozenset[str] = frozenset()):
    book: dict[str, float] = {}
    kept_nodes = SimpleNamespace(
        entries=lambda: entries,
        open=lambda name: FakeNode(book, name, name in failing),
        book=SimpleNamespace(read=lambda: dict(book)),
        settled=[],
    )
    kept_nodes.settle = lambda name, seen_by: kept_nodes.settled.append((name, seen_by))
    cloud = SimpleNamespace(get_node=lambda zone, name: None if name in gone else object())
    return SimpleNamespace(
        kept=kept_nodes, billing=BillingState(), cloud=cloud, cloud_for=lambda backend: cloud
    )


def test_each_kept_node_gets_a_heartbeat_and_a_failure_is_shown_not_raised():
    session = fake_session([entry("good"), entry("bad", idle_s=1800.0)], failing={"bad"})
    said: list[str] = []
    changes: list[int] = []
    beats = KeptHeartbeats(session, said.append, lambda: changes.append(1))  # type: ignore[arg-type]
    interval = beats.beat_once()
    assert interval == 1.5  # idle/4 of the most pressing node
    good = session.billing.get("good")
    assert good is not None and good.last_heartbeat == 5000.0 and good.idle_deadline() == 5006.0
    assert session.billing.get("bad") is None  # never reached: not shown as kept
    assert said == ["bad: heartbeat not sent: connection refused"] and changes == [1]
    beats.beat_once()
    assert len(said) == 1  # the same problem is said once


def test_a_node_that_is_gone_stops_showing_and_no_kept_node_means_a_slow_check():
    session = fake_session([entry("a")], failing=set())
    beats = KeptHeartbeats(session, lambda message: None)  # type: ignore[arg-type]
    beats.beat_once()
    assert session.billing.get("a") is not None
    session.kept.open = lambda name: FakeNode({}, name, True)
    beats._nodes.clear()
    session.cloud.get_node = lambda zone, name: None
    beats.beat_once()
    assert session.billing.get("a") is None
    session.kept.entries = lambda: []
    assert beats.beat_once() == IDLE_CHECK_S


@pytest.mark.parametrize(
    ("how", "shown", "settled"),
    [
        ("still listed", True, []),
        ("left the ledger", False, []),  # `down` in another terminal closed its record
        ("not in the listing", False, [("a", "heartbeat")]),  # its watchdog, the console
        ("listing unreadable", True, []),  # it may still exist: it keeps showing
    ],
)
def test_a_kept_node_leaves_the_billing_state_in_the_round_it_leaves_the_ledger_or_listing(
    how, shown, settled
):
    """Issue 52, item 1: the bar, the meter, the quit guard and the parting words read the
    billing state; a node deleted elsewhere leaves it within one heartbeat."""
    session = fake_session([entry("a"), entry("b")], failing=set())
    beats = KeptHeartbeats(session, lambda message: None)  # type: ignore[arg-type]
    beats.beat_once()
    assert session.billing.get("a") is not None
    if how == "left the ledger":
        session.kept.entries = lambda: [entry("b")]
    elif how == "not in the listing":
        session.cloud.get_node = lambda zone, name: None if name == "a" else object()
    elif how == "listing unreadable":

        def refused(zone, name):
            raise OSError("zone unreachable")

        session.cloud.get_node = refused
    beats.beat_once()
    assert (session.billing.get("a") is not None) is shown
    assert session.billing.get("b") is not None  # the other kept node stays
    assert session.kept.settled == settled
    assert bool(session.billing.undecided()) is False  # kept nodes never ask at quit


def test_the_longest_wait_between_rounds_can_be_set():
    session = fake_session([entry("a", idle_s=1800.0)], failing=set())
    assert KeptHeartbeats(session, print).beat_once() == 60.0  # type: ignore[arg-type]
    beats = KeptHeartbeats(session, print, longest_s=0.5)  # type: ignore[arg-type]
    assert beats.beat_once() == 0.5


def test_heartbeats_stop():
    session = fake_session([], failing=set())
    beats = KeptHeartbeats(session, lambda message: None).start()  # type: ignore[arg-type]
    beats.stop(timeout=5)
    assert beats.stopped and not beats._thread.is_alive()  # type: ignore[union-attr]


def test_the_meter_never_says_nothing_bills_while_leftovers_are_unknown():
    state = BillingState()
    state.expect_leftovers()
    assert "Nothing is billing" not in meter_text(state)
    assert "Looking for leftovers" in meter_text(state)
    state.leftover_check_failed()
    assert "unknown" in meter_text(state)
    state.add_leftovers([])  # a later check that answered: nothing from earlier runs
    assert meter_text(state) == "Nothing is billing"


AT = time.time() + 3 * 3600
AT_CLOCK = time.strftime("%H:%M", time.localtime(AT))


@pytest.mark.parametrize(
    ("changes", "practice", "end"),
    [
        ({}, False, "ends after 10m idle"),
        ({"max_deadline": AT}, False, f"ends after 10m idle, by {AT_CLOCK}"),
        # kept from the wizard: its watchdog deletes it at the run's deadline, no idle time
        (
            {"idle_s": None, "max_deadline": AT},
            False,
            f"ends at {AT_CLOCK} (its deadline)",
        ),
        (
            {"idle_s": None, "max_deadline": AT, "deadline_by_google": True},
            False,
            f"Google deletes it at {AT_CLOCK}",
        ),
        ({"idle_s": None}, False, "no watchdog: only a delete ends it"),
        ({"idle_s": None}, True, "no watchdog: only a delete ends it"),
        ({"idle_s": 120.0, "max_deadline": AT}, True, f"ends after 2m idle, by {AT_CLOCK}"),
    ],
)
def test_the_bar_and_the_guard_say_a_kept_nodes_end_as_its_end_sentence(changes, practice, end):
    """Issue 52, item C: the bar said "idle deadline in 28 min" and the guard "its watchdog
    deletes it at HH:MM unless it is used", a countdown the wizard's heartbeats keep moving,
    beside the end sentence. Both now say the sentence's facts (words/kept_end.py), once."""
    from tpuwizard.words.kept_text import billed_end_sentence, guard_until_words

    item = kept(last_heartbeat=time.time(), **changes)
    state = BillingState()
    state.note_kept(item)
    bar = meter_text(state, practice=practice)
    assert bar.count(end) == 1, bar
    guard = guard_until_words([item], None, None, None, practice)
    assert guard.count(billed_end_sentence(item, practice, "clause")) == 1, guard
    for words in (bar, guard):
        assert re.search(r"\bin \d+ (min|s)\b|unless it is used", words) is None, words


def test_the_meter_says_a_resource_that_stopped_billing_no_longer_bills_until_it_is_gone():
    from tpuwizard.core.launch.events import launch_events as ev

    state = BillingState()
    state.apply(ev.ResourceExists("node-a", "node", ZONE, "v5litepod-1", "vm", "run-1"))
    assert meter_text(state) == "EXISTS node-a (not billing yet)"
    state.apply(ev.BillingStarted("node-a", time.time() - 66, 1.2))
    assert meter_text(state).startswith("BILLING node-a 66s")
    state.apply(ev.BillingStopped("node-a", 66.0, 0.02))
    assert meter_text(state) == "EXISTS node-a (no longer billing)"  # never "not ... yet"
    state.apply(ev.TeardownVerified("node-a", "node", 66.0, 0.02))
    assert meter_text(state) == "Nothing is billing"


def test_a_node_kept_on_compute_engine_shows_googles_deadline_as_a_time():
    # Compute Engine deletes it at its max run duration, read back from the cloud: the bar says
    # who deletes it and when, not a watchdog's countdown.
    ends = time.time() + 30 * 60
    state = BillingState()
    state.note_kept(kept(idle_s=None, max_deadline=ends, deadline_by_google=True))
    text = meter_text(state)
    assert f"Google deletes it at {time.strftime('%H:%M', time.localtime(ends))}" in text
    assert "deadline in" not in text


def test_a_compute_engine_record_ended_by_google_is_noted_with_googles_deadline():
    ends = time.time() + 600
    compute = Resource("node", "p", ZONE, "vm-c", "v6e-4", "r1", backend="compute")
    tpu = Resource("node", "p", ZONE, "vm-t", "v6e-4", "r1")  # a watchdog's deadline
    extra = {"idle_s": None, "kept_at": 1000.0, "deadline": ends}
    entries = [
        Entry(compute, "kept", 1000.0, 900.0, {**extra, "ended_by": "google"}),
        Entry(tpu, "kept", 1000.0, 900.0, {**extra, "ended_by": "watchdog"}),
    ]
    session = fake_session(entries, failing=set())
    KeptHeartbeats(session, lambda message: None).beat_once()  # type: ignore[arg-type]
    on_compute, on_tpu = session.billing.get("vm-c"), session.billing.get("vm-t")
    assert on_compute is not None and on_compute.deadline_by_google
    assert on_compute.max_deadline == ends
    assert on_tpu is not None and not on_tpu.deadline_by_google
    assert "Google deletes it at" in meter_text(session.billing)


def test_the_bar_says_a_kept_nodes_end_within_100_columns():
    """The end sentence's bar form leaves a 100-column bar the node's name on the first step,
    and on the longest step its money and its end (StatusBar drops names past its 98 columns
    within its padding, less 2)."""
    state = BillingState()
    name = "tpuwizard-20261206-074240-1f47"
    now = time.time()
    state.note_kept(
        Billed(
            name, "node", ZONE, "v5litepod-1", "vm", now - 3600, now - 3600, kept=True,
            kept_since=now - 3600, idle_s=1800.0, max_deadline=AT, last_heartbeat=now,
        )
    )  # fmt: skip
    end = f"ends after 30m idle, by {AT_CLOCK}"
    first = f"PRACTICE | 1 Route | {meter_text(state, practice=True)}"
    assert name in first and first.endswith(end) and len(first) <= 96, (len(first), first)
    longest = f"PRACTICE | 6 Before create | {meter_text(state, False, practice=True)}"
    assert longest.endswith(end) and "~$1.20" in longest and len(longest) <= 96, longest
