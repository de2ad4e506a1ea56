"""A kept launch (``up --idle``) keeps its node alive until it hands it over.

The idle time starts when the watchdog is armed; the verifier on a slow machine outlasted a short
one and the watchdog deleted the node under its own launch (CI, 2026-12-02).
"""

import dataclasses
import threading

from tests.fakes import FakeTransport, MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tests.waiting import wait_until
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import Launch
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.workers.watchdog import HEARTBEAT_FILE
from tpuwizard.core.remote.transports import Result


class TouchingTransport(FakeTransport):
    """Workers that answer the heartbeat's touch, and fail it when ``failing``."""

    failing = False

    def run(self, worker, command, timeout=600, stdin=None, cancellable=True):
        super().run(worker, command, timeout, stdin, cancellable)
        if HEARTBEAT_FILE in command and not self.failing:
            return Result(0, "", "")
        return Result(1, "", "no route to host")


def beats(transport: FakeTransport) -> int:
    return sum(w == 0 and HEARTBEAT_FILE in c for w, c in transport.commands)


def kept_launch(tmp_path, idle_minutes, events):
    plan = dataclasses.replace(
        make_plan(tmp_path), deadline=Deadline(watchdog=True, idle_minutes=idle_minutes)
    )
    return Launch(plan, make_runtime(tmp_path, MemoryCloud()), events.append, CancelToken())


def test_heartbeats_go_to_worker_0_while_the_launch_holds_the_node_and_stop_after(tmp_path):
    transport = TouchingTransport()
    launch = kept_launch(tmp_path, 4 / 60, [])  # idle 4 s: a beat every second
    before = set(threading.enumerate())
    with launch.holding(transport):
        assert beats(transport) == 1  # at once: the idle time restarts as verify starts
        wait_until(lambda: beats(transport) >= 3, 30, "three heartbeats")
        beaters = set(threading.enumerate()) - before
    # None once the node is handed over: the thread that beats has ended (no sleep to see that
    # no beat comes, which a loaded machine could pass by being slow).
    assert beaters and not any(thread.is_alive() for thread in beaters)


def test_a_heartbeat_that_fails_is_said_and_the_launch_goes_on(tmp_path):
    transport, events = TouchingTransport(), list[ev.Event]()
    transport.failing = True
    with kept_launch(tmp_path, 4 / 60, events).holding(transport):
        wait_until(lambda: beats(transport) >= 2, 30, "two heartbeats")
    said = [e.text for e in events if isinstance(e, ev.BootstrapLine)]
    assert said and all("heartbeat not sent" in text for text in said)


def test_a_launch_without_an_idle_time_sends_no_heartbeat(tmp_path):
    transport = TouchingTransport()
    with kept_launch(tmp_path, None, []).holding(transport):
        pass
    assert beats(transport) == 0
