"""BillingState: what exists and what costs, folded from the lifecycle's events and leftovers."""

from __future__ import annotations

import pytest

from tests.lifecycle_events import planned
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billable import Billable
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.records.ledger import Resource

NAME = "tpuwizard-run"


def exists(state: BillingState, name: str = NAME, kind: str = "node") -> None:
    state.apply(ev.ResourceExists(name, kind, "us-central1-a", "v5litepod-4", "vm", "r1"))


def test_nothing_exists_before_the_create_call():
    state = BillingState()
    state.apply(planned(name=NAME))
    assert not state.may_bill() and state.existing() == [] and state.cost_usd() == 0.0


def test_a_resource_exists_from_the_create_call_but_costs_nothing_until_ready():
    state = BillingState()
    exists(state)
    assert [b.name for b in state.existing()] == [NAME]
    assert state.costing() == []
    assert state.cost_usd() == 0.0
    state.apply(ev.Provisioning("CREATING", 30.0, 0.0))
    billed = state.get(NAME)
    assert billed is not None and billed.state == "CREATING" and state.costing() == []


def test_a_refused_create_leaves_nothing():
    state = BillingState()
    exists(state)
    state.apply(ev.CreateRefused(NAME, "node", "us-central1-a"))
    assert not state.may_bill() and state.undecided() == []


def test_ready_starts_the_meter_and_verified_gone_stops_it():
    state = BillingState()
    exists(state)
    state.apply(ev.BillingStarted(NAME, 1000.0, 4.8))
    # 4 chips at $1.20 per chip-hour for half an hour.
    assert state.cost_usd(now=1000.0 + 1800) == pytest.approx(2.40)
    state.apply(ev.TeardownStarted(NAME, "node"))
    assert state.may_bill(), "a delete that is not verified yet still bills"
    state.apply(ev.BillingStopped(NAME, 1800.0, 2.4))
    state.apply(ev.TeardownVerified(NAME, "node", 1800.0, 2.4))
    assert not state.may_bill()


def test_a_failed_teardown_keeps_it_billing():
    state = BillingState()
    exists(state)
    state.apply(ev.BillingStarted(NAME, 1000.0, 4.8))
    state.apply(ev.TeardownFailed(NAME, "node", Diagnosis("not_gone", "still listed", "")))
    state.apply(ev.Finished(False, 4, "runs/r1", 1.0, [NAME]))
    assert [b.name for b in state.costing()] == [NAME]
    assert [b.name for b in state.undecided()] == [NAME]


def test_kept_still_bills_but_needs_no_decision():
    state = BillingState()
    exists(state)
    state.apply(ev.BillingStarted(NAME, 1000.0, 4.8))
    state.apply(ev.Kept(NAME, "us-central1-a", f"tpuwizard teardown {NAME}", 4.8))
    assert [b.name for b in state.costing()] == [NAME]
    assert state.undecided() == []


def leftover(name: str, state: str, kind: str = "node", zone: str = "us-west1-c") -> Billable:
    resource = Resource(kind, "p", zone, name, "v5litepod-1", "old-run", "spot")
    return Billable(resource, state, 3600.0, 0.3, "ledger")


def test_leftovers_count_until_deleted_or_left():
    state = BillingState()
    state.add_leftovers([leftover("old", "READY"), leftover("old-qr", "ACCEPTED", "queued")])
    assert {b.name for b in state.existing()} == {"old", "old-qr"}
    # A queued request still waiting for capacity has no VM: it costs nothing.
    assert [b.name for b in state.costing()] == ["old"]
    assert {b.name for b in state.undecided()} == {"old", "old-qr"}
    state.leave(["old", "old-qr"])
    assert state.undecided() == [] and state.may_bill(), "left running: still billing"
    state.forget("old")
    assert [b.name for b in state.existing()] == ["old-qr"]


def test_a_leftover_is_not_counted_twice_by_name():
    state = BillingState()
    exists(state, "old")
    state.add_leftovers([leftover("old", "READY", zone="us-central1-a")])
    (only,) = state.existing()
    assert not only.leftover


def test_one_name_in_several_zones_is_several_resources():
    # --fan-out asks for one name in every zone at once: each request exists and bills alone.
    state = BillingState()
    for zone in ("us-central1-a", "us-west1-c", "us-east5-a"):
        state.apply(ev.ResourceExists(NAME, "node", zone, "v5litepod-4", "vm", "r1"))
    state.apply(ev.BillingStarted(NAME, 1000.0, 4.8, "us-west1-c"))
    state.apply(ev.BillingStarted(NAME, 1010.0, 4.8, "us-east5-a"))
    assert len(state.existing()) == 3
    assert {b.zone for b in state.costing()} == {"us-west1-c", "us-east5-a"}
    state.apply(ev.Provisioning("CREATING", 1.0, 0.0, "us-central1-a"))
    state.apply(ev.CreateRefused(NAME, "node", "us-central1-a"))
    state.apply(ev.BillingStopped(NAME, 30.0, 0.04, "us-east5-a"))
    state.apply(ev.TeardownVerified(NAME, "node", 30.0, 0.04, "us-east5-a", 1))
    (left,) = state.existing()
    assert left.zone == "us-west1-c" and left.costing_since == 1000.0
    state.apply(ev.TeardownVerified(NAME, "node", 60.0, 0.08, "us-west1-c"))
    assert not state.may_bill()


def test_a_leftover_the_ledger_says_was_kept_bills_but_needs_no_decision():
    state = BillingState()
    resource = Resource("node", "p", "us-west1-c", "kept-node", "v5litepod-1", "old-run")
    state.add_leftovers([Billable(resource, "READY", 600.0, 0.2, "ledger", kept=True)])
    (item,) = state.existing()
    assert item.kept and item.costing_since is not None
    assert state.undecided() == []


def test_a_flex_start_leftover_shows_the_most_it_has_cost_in_status(capsys):
    from tpuwizard.words.render import render_status

    flex = Resource("node", "p", "us-east5-a", "tpuwizard-fx", "v6e-4", "r1", route="flex")
    found = Billable(flex, "READY", age_s=3600.0, cost_usd=None, source="ledger", bills=True)
    assert found.cost_at_most_usd is not None and found.cost_at_most_usd > 0
    assert Billable(flex, "WAITING", 3600.0, None, "ledger", bills=False).cost_at_most_usd == 0.0
    render_status([found], "estimate")
    shown = capsys.readouterr().out
    assert f"at most ${found.cost_at_most_usd:,.2f}" in shown and "unknown" not in shown


def test_a_stop_deletes_what_this_session_made_never_a_kept_node_nor_a_leftover():
    from tpuwizard.core.launch.records.billing_state import Billed

    state = BillingState()
    # A node kept by an earlier `up`, as the wizard's heartbeats note it (not a leftover).
    state.note_kept(
        Billed("kept-up", "node", "us-central1-a", "v5litepod-4", "vm", 0.0, 0.0, kept_since=1.0)
    )
    state.add_leftovers([leftover("old", "READY")])
    assert state.made_here() == [], "nothing of this session's: a stop deletes nothing"
    exists(state)  # this session's launch makes one
    assert [b.name for b in state.made_here()] == [NAME]
    state.apply(ev.Kept(NAME, "us-central1-a", f"tpuwizard teardown {NAME}", 4.8))
    assert state.made_here() == [], "kept in this session: kept too"
