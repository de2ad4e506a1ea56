"""A node is handed over only with the guard its plan promised (issue 56, item 3, and G9): the
watchdog is armed at the first SSH, before the bootstrap; a keep that ends before it is armed, a
node that failed its setup or its checks, and a create that never produced a node are deleted
(said with ``NotKept``, verified), never "Kept ... on purpose". Unguarded only where the user
asked (no watchdog) or where Google's own deadline guards it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import RUN, ZONE, make_plan, make_runtime, on_disk
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle import launch as lifecycle
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.words.event_text import describe

NEVER, UNGUARDED, UNPROVEN = (
    ev.NotKeptBecause.NEVER_CREATED,
    ev.NotKeptBecause.UNGUARDED,
    ev.NotKeptBecause.UNPROVEN,
)


def keep_launch(
    tmp_path,
    monkeypatch,
    *,
    route="vm",
    watchdog=True,
    arms=True,
    boots=True,
    checks=True,
    faults="",
):
    """``launch --keep`` / ``up`` in the in-memory world; the workers' steps are stand-ins that
    say when they ran (``steps``) and pass or fail as asked."""
    steps: list[str] = []

    def arm(*_args, **_kwargs) -> bool:
        steps.append("arm")
        return arms

    def bootstrap(self, transport) -> None:
        steps.append("bootstrap")
        if not boots:
            raise RemoteError("worker 0: No space left on device (os error 28)")

    def verify(self, transport) -> None:
        steps.append("verify")
        self.receipt_ok = checks

    monkeypatch.setattr(lifecycle, "arm_watchdog", arm)
    monkeypatch.setattr(WorkerSteps, "bootstrap", bootstrap)
    monkeypatch.setattr(WorkerSteps, "verify", verify)
    cloud = MemoryCloud.faulty(faults) if faults else MemoryCloud()
    plan = replace(make_plan(tmp_path, route), deadline=Deadline(watchdog=watchdog, keep=True))
    events: list[ev.Event] = []
    code = lifecycle.run_launch(plan, make_runtime(tmp_path, cloud), events.append, CancelToken())
    return code, events, steps, cloud


def test_the_watchdog_is_armed_before_the_bootstrap(tmp_path, monkeypatch):
    _code, _events, steps, _cloud = keep_launch(tmp_path, monkeypatch)
    assert steps == ["arm", "bootstrap", "verify"]


@pytest.mark.parametrize(
    ("case", "because"),
    [
        ({}, None),  # guarded and proven: handed over
        ({"watchdog": False}, None),  # the user chose no watchdog: kept unguarded, as asked
        ({"route": "flex", "watchdog": False}, None),  # Google's deadline guards it
        ({"arms": False}, UNGUARDED),  # arming failed: the plan's promise is not kept
        ({"boots": False}, UNPROVEN),  # the bootstrap failed after arming: no use to anyone
        ({"checks": False}, UNPROVEN),  # the verifier failed
        ({"watchdog": False, "boots": False}, UNPROVEN),
    ],
)
def test_a_node_is_handed_over_only_guarded_and_proven(tmp_path, monkeypatch, case, because):
    code, events, _steps, cloud = keep_launch(tmp_path, monkeypatch, **case)
    names = [type(e).__name__ for e in events]
    if because is None:
        assert "Kept" in names and "NotKept" not in names and "TeardownStarted" not in names
        assert on_disk(tmp_path)[-1][2] == "kept"
        return
    (not_kept,) = [e for e in events if isinstance(e, ev.NotKept)]
    assert not_kept.because == because
    assert "Kept" not in names and names.index("NotKept") < names.index("TeardownStarted")
    assert "TeardownVerified" in names and cloud.nodes == {} and cloud.queued == {}
    assert on_disk(tmp_path)[-1][1:] == (RUN, "gone")
    assert code != 0
    assert describe(not_kept)[0].startswith("Not kept: ")


def test_a_create_never_seen_to_produce_a_node_is_never_kept(tmp_path):
    # The create kept answering 503 (G9's unavailable=40), or another run holds the name: the
    # intent is recorded, the create's answer never came.
    cloud = MemoryCloud()
    plan = replace(make_plan(tmp_path), deadline=Deadline(watchdog=True, keep=True))
    events: list[ev.Event] = []
    launch = lifecycle.Launch(plan, make_runtime(tmp_path, cloud), events.append, CancelToken())
    resource = Resource("node", plan.project, ZONE, "tpu-a", plan.accelerator, plan.run_id)
    launch.rt.ledger.record("intent", resource)
    launch.state.resource = resource  # created_at stays None: never seen created
    code = launch.ending.finish(3)
    names = [type(e).__name__ for e in events]
    (not_kept,) = [e for e in events if isinstance(e, ev.NotKept)]
    assert not_kept.because == NEVER and "Kept" not in names
    assert "TeardownVerified" in names and code == 3
    assert on_disk(tmp_path)[-1] == ("tpu-a", RUN, "gone")


def test_read_errors_before_ready_end_the_keep_before_arming_and_it_is_not_kept(
    tmp_path, monkeypatch
):
    # The API answers 500 to reads while the launch waits for READY (G2's read_error=30).
    _code, events, steps, _cloud = keep_launch(tmp_path, monkeypatch, faults="read_error=30")
    assert "arm" not in steps
    names = [type(e).__name__ for e in events]
    assert "Kept" not in names
    (not_kept,) = [e for e in events if isinstance(e, ev.NotKept)]
    assert not_kept.because == UNGUARDED and not_kept.name == "tpu-a"


@pytest.mark.parametrize("because", list(ev.NotKeptBecause))
def test_each_reason_is_said_with_what_happens_next(because):
    (line,) = describe(ev.NotKept("tpu-a", because))
    assert "tpu-a" in line and "verified by listing" in line
