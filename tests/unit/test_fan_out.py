"""``--fan-out`` with the in-memory cloud: the first READY wins, every other request is deleted
and verified gone, each has its ledger intent before its call, and the billing state (what the
meter and the quit guard read) sees every request until it is gone."""

from __future__ import annotations

import contextlib
import threading

import pytest

from tests.fakes import Crash, MemoryCloud
from tests.plans import changed, launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.records.attempts import NO_CAPACITY, READY, AttemptHistory
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.records.ledger import Ledger

RUN = "20261201-101500-fa01"
ZONES = ("us-central1-a", "us-west1-c", "us-east5-a")


class SlowZoneCloud(MemoryCloud):
    """Nodes in ``slow`` take a second longer than the others."""

    slow: frozenset[str] = frozenset()

    def create_node(self, req, on_part=None):
        operation = super().create_node(req)
        making = self._making.get(("node", req.zone, req.node_id))
        if req.zone in self.slow and making is not None:
            making.done_at += 1.0
        return operation


def fan_plan(tmp_path, zones=ZONES, **changes) -> LaunchPlan:
    plan = launch_plan(
        accelerator="v5litepod-1",
        zone=zones[0],
        project="practice-project",
        run_id=RUN,
        run_dir=tmp_path / "runs" / RUN,
        name="tpu-f",
        zones=zones,
        fan_out=True,
        failover=True,
    )
    return changed(plan, **changes)


def run(tmp_path, cloud, plan=None, cancel=None):
    rt = make_runtime(tmp_path, cloud)
    events: list[ev.Event] = []
    code = run_launch(plan or fan_plan(tmp_path), rt, events.append, cancel or CancelToken())
    return code, events, Ledger(rt.ledger.path), AttemptHistory.beside(rt.ledger)


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_the_first_ready_wins_and_every_other_request_is_deleted_and_verified_gone(tmp_path):
    cloud = SlowZoneCloud.faulty("stockout=us-central1-a", delay=0.05)
    cloud.slow = frozenset({"us-east5-a"})
    code, events, ledger, history = run(tmp_path, cloud)
    assert code == EXIT_FAILED  # the in-memory workers run nothing: it fails after READY
    (started,) = of(events, ev.FanOutStarted)
    assert started.zones == list(ZONES) and started.worst_case_per_hour_usd is not None
    assert not started.quota_checked  # no preflight here: said, never assumed
    (won,) = of(events, ev.FanOutWon)
    assert won.zone == "us-west1-c" and sorted(won.losers) == ["us-central1-a", "us-east5-a"]
    # One request per zone, each announced before its call, each ended verified gone.
    assert sorted(e.zone for e in of(events, ev.ResourceExists)) == sorted(ZONES)
    assert sorted(e.zone for e in of(events, ev.TeardownVerified)) == sorted(ZONES)
    assert {(n.zone, n.name) for n in cloud.created} == {(z, "tpu-f") for z in ZONES}
    assert cloud.nodes == {}
    assert sorted((e.resource.zone, e.op) for e in ledger.entries()) == [
        (z, "gone") for z in sorted(ZONES)
    ]
    # The cut-short loser was deleted, not just abandoned: its delete was asked for.
    assert ("us-east5-a", "tpu-f") in {
        (c.zone, c.name) for c in cloud.calls if "delete" in c.method
    }
    outcomes = {a.zone: a.outcome for a in history.attempts("v5litepod-1")}
    # The stocked-out zone's answer and the winner's READY come at the same moment here (one
    # provisioning delay for all): whichever the launch heard first decides how it is recorded.
    assert outcomes.pop("us-central1-a") in (NO_CAPACITY, "cut short")
    assert outcomes == {"us-west1-c": READY, "us-east5-a": "cut short"}
    assert ev.Ready in {type(e) for e in events} and len(of(events, ev.Ready)) == 1
    assert of(events, ev.Finished)[-1].remaining == []


def test_every_request_is_on_the_meter_until_it_is_verified_gone(tmp_path):
    cloud = MemoryCloud(delay=0.05)  # every zone has capacity: all three may reach READY
    billing = BillingState()
    most = []
    rt = make_runtime(tmp_path, cloud)

    def emit(event):
        billing.apply(event)
        most.append(len(billing.existing()))

    code = run_launch(fan_plan(tmp_path), rt, emit, CancelToken())
    assert code == EXIT_FAILED
    assert max(most) == 3  # the three requests existed at once, and the meter saw each
    assert not billing.may_bill() and cloud.nodes == {}
    assert [e.op for e in Ledger(rt.ledger.path).entries()] == ["gone"] * 3


def test_each_ready_request_bills_until_its_own_verified_delete(tmp_path):
    cloud = MemoryCloud(delay=0.05)
    _code, events, ledger, _ = run(tmp_path, cloud)
    started = {e.zone for e in of(events, ev.BillingStarted)}
    stopped = {e.zone for e in of(events, ev.BillingStopped)}
    assert started and started <= stopped  # a loser READY too stopped billing only when gone
    (won,) = of(events, ev.FanOutWon)
    gone = of(events, ev.TeardownVerified)
    assert won.zone in {e.zone for e in gone} and len(gone) == 3
    # Each says how many of the launch's requests still exist: none after the last.
    assert gone[0].others_left == 2 and gone[-1].others_left == 0
    assert all(e.op == "gone" for e in ledger.entries())


def test_no_zone_with_capacity_is_a_stockout_with_nothing_left(tmp_path):
    cloud = MemoryCloud.faulty("stockout=" + ",".join(ZONES), delay=0.05)
    code, events, ledger, history = run(tmp_path, cloud)
    assert code == EXIT_CLOUD
    (failed,) = of(events, ev.Failed)
    assert failed.diagnosis.kind == "stockout"
    assert not of(events, ev.FanOutWon) and cloud.nodes == {}
    assert [e.op for e in ledger.entries()] == ["gone"] * 3
    assert [a.outcome for a in history.attempts()] == [NO_CAPACITY] * 3


def test_a_stop_during_the_fan_out_deletes_every_request(tmp_path):
    cloud = MemoryCloud(delay=30.0)  # nothing gets READY before the stop
    cancel = CancelToken()
    timer = threading.Timer(0.5, cancel.set, args=("test stop",))
    timer.start()
    code, events, ledger, _ = run(tmp_path, cloud, cancel=cancel)
    timer.join()
    assert code == EXIT_FAILED and cloud.nodes == {}
    assert of(events, ev.Failed)[-1].diagnosis.kind == "cancelled"
    assert [e.op for e in ledger.entries()] == ["gone"] * 3


@pytest.mark.parametrize("after", range(1, 14))
def test_a_crash_at_any_call_leaves_nothing_the_ledger_does_not_name(tmp_path, after):
    # The in-memory crash drill: from call number ``after`` on, every call dies as the
    # process would; whatever exists then must be an open ledger record.
    cloud = MemoryCloud(delay=0.05)
    cloud.crash_at = after
    with contextlib.suppress(Crash):
        run(tmp_path, cloud)
    open_records = {
        (e.resource.zone, e.resource.name)
        for e in Ledger(tmp_path / "state" / "ledger.jsonl").open_entries()
    }
    assert set(cloud.nodes) <= open_records
