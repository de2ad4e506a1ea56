"""Keep is kept only when it is safe: before the watchdog is armed it waits; when arming fails
the user is asked; a stop meanwhile deletes (the launch's finish decides, test_launch_safety)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from tests.fakes import FakeTransport, MemoryCloud, checked
from tests.unit.test_launch_safety import ZONE, make_plan, make_runtime
from tpuwizard.core.cancel import KEEP_PENDING, KEEP_SAFE, KEEP_UNSAFE, Cancelled, CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle import launch as lifecycle
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.words.event_text import describe


def test_keep_asked_before_the_watchdog_waits_for_it():
    token = CancelToken()
    assert token.ask_to_keep() == KEEP_PENDING
    assert not token.is_set() and not token.keep  # the launch goes on: nothing kept yet
    assert token.settle_keep(KEEP_SAFE) is True
    assert token.is_set() and token.keep


def test_keep_asked_once_it_is_safe_is_kept_at_once():
    token = CancelToken()
    assert token.settle_keep(KEEP_SAFE) is False  # nobody was waiting
    assert token.ask_to_keep() == KEEP_SAFE
    assert token.keep


def test_keep_asked_after_arming_failed_is_not_kept_but_answered_unsafe():
    token = CancelToken()
    token.settle_keep(KEEP_UNSAFE)
    assert token.ask_to_keep() == KEEP_UNSAFE
    assert not token.is_set() and not token.keep


def launch_at_arming(tmp_path):
    plan = replace(make_plan(tmp_path), deadline=Deadline(watchdog=True))
    events: list[ev.Event] = []
    launch = lifecycle.Launch(
        plan, make_runtime(tmp_path, MemoryCloud()), events.append, CancelToken()
    )
    launch.state.resource = Resource(
        "node", plan.project, ZONE, "tpu-a", plan.accelerator, plan.run_id
    )
    launch.state.created_at = 1000.0
    return launch, events


def test_a_waiting_keep_whose_watchdog_fails_asks_and_waits_for_the_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(lifecycle, "arm_watchdog", lambda *a, **k: False)
    launch, events = launch_at_arming(tmp_path)
    launch.cancel.ask_to_keep()
    raised: list[BaseException] = []

    def arm() -> None:
        try:
            launch.arm_watchdog(FakeTransport())
        except BaseException as err:
            raised.append(err)

    thread = threading.Thread(target=arm)
    thread.start()
    thread.join(timeout=0.5)
    assert thread.is_alive(), "the launch went on without the user's answer"
    assert [type(e) for e in events] == [ev.KeepNeedsAnswer]
    launch.cancel.request_keep()  # "Keep without a watchdog"
    thread.join(timeout=60)
    assert isinstance(raised[0], Cancelled) and launch.cancel.keep
    assert launch.state.watchdog_deadline is None


def test_an_armed_watchdog_keeps_a_waiting_keep(tmp_path, monkeypatch):
    monkeypatch.setattr(lifecycle, "arm_watchdog", lambda *a, **k: True)
    launch, events = launch_at_arming(tmp_path)
    launch.cancel.ask_to_keep()
    launch.arm_watchdog(FakeTransport())
    assert launch.cancel.keep and launch.state.watchdog_deadline is not None and events == []


@pytest.mark.parametrize(
    ("ended_by", "deadline", "words"),
    [
        ("watchdog", 2000.0, "It deletes itself at"),
        ("google", 2000.0, "Google deletes it at about"),
        ("nothing", None, "No watchdog guards it: it bills until you delete it."),
    ],
)
def test_the_kept_line_says_what_ends_the_node(ended_by, deadline, words):
    kept = ev.Kept("tpu-a", ZONE, "tpuwizard teardown tpu-a", 1.2, deadline, ended_by)
    assert words in describe(kept)[0]


def finished_after(handle_actions) -> ev.Finished:
    from tpuwizard.session.launch_handle import LaunchHandle

    handle = LaunchHandle(None, checked(make_plan_for_handle()))  # type: ignore[arg-type]
    handle_actions(handle)
    return handle._with_exit_code(ev.Finished(False, 1, "runs/x", None, ["tpu-a"]))


def make_plan_for_handle():
    from pathlib import Path

    return make_plan(Path("/nonexistent"))


def test_the_summary_after_keep_says_the_code_the_wizard_exits_with():
    def keep_now(handle) -> None:
        handle.cancel.settle_keep(KEEP_SAFE)
        handle.keep(0)

    finished = finished_after(keep_now)
    assert finished.exit_code == 0 and finished.ok


def test_a_stop_after_a_queued_keep_says_the_signal_not_the_keep():
    def keep_then_signal(handle) -> None:
        handle.keep(0)  # queued: the watchdog is not armed yet
        handle.stop_for_signal(15, "SIGTERM")

    assert finished_after(keep_then_signal).exit_code == 143
