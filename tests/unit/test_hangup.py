"""After a hangup the wizard ends its process itself, and only once nothing is being deleted;
a terminal that fails never blocks Textual's writer; the session says when it is deleting."""

from __future__ import annotations

import errno
import io
import signal
import threading

import pytest

from tests.fakes import MemoryCloud, checked
from tests.plans import launch_plan
from tests.waiting import wait_until
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session import runtime
from tpuwizard.session.session import Session
from tpuwizard.tui import hangup
from tpuwizard.tui.hangup import Hangup, TerminalOutput


class Terminal(io.StringIO):
    """Answers each write with the next of ``answers`` (an error, or None: taken), then takes
    every write."""

    def __init__(self, *answers: OSError | None) -> None:
        super().__init__()
        self.answers = list(answers)

    def write(self, text: str) -> int:
        if self.answers and (error := self.answers.pop(0)) is not None:
            raise error
        return super().write(text)


def test_a_terminal_that_answers_eio_is_reported_once_and_then_written_no_more():
    gone: list[bool] = []
    terminal = Terminal(None, OSError(errno.EIO, "Input/output error"))  # a closed window's
    output = TerminalOutput(terminal, lambda: gone.append(True))
    for text in ("frame 1", "frame 2", "frame 3", "frame 4"):
        output.write(text)  # never raises: Textual's writer thread lives on, emptying its queue
    output.flush()
    assert gone == [True]
    assert terminal.getvalue() == "frame 1"


def test_a_write_that_would_block_loses_only_its_text():
    gone: list[bool] = []
    terminal = Terminal(BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"))
    output = TerminalOutput(terminal, lambda: gone.append(True))
    output.write("a frame the terminal would not take now")
    output.write("the next frame")
    assert gone == []  # not a hangup: nothing is torn down for it
    assert terminal.getvalue() == "the next frame"


@pytest.fixture
def exits(monkeypatch) -> list[int]:
    """The codes os._exit was called with (it returns here, and ends nothing)."""
    codes: list[int] = []
    monkeypatch.setattr(hangup.os, "_exit", codes.append)
    monkeypatch.setattr(hangup, "SHUTDOWN_GRACE_S", 0.0)
    return codes


def test_after_a_hangup_the_exit_waits_for_the_deletion_under_way(exits):
    deleting, polls = threading.Event(), []
    deleting.set()

    def busy() -> bool:
        polls.append(1)
        return deleting.is_set()

    guard = Hangup(busy)
    guard.signalled(signal.SIGHUP)
    guard.finished(129)
    try:
        wait_until(lambda: len(polls) >= 3, 30, "the exit to wait on the deletion")
        assert exits == []  # asked three times, told three times that a deletion is under way
    finally:
        deleting.clear()  # else the exit's thread would wait for ever, and pytest with it
    wait_until(lambda: exits, 30, "the exit")
    assert exits == [129]


def test_a_hangup_after_the_way_out_ends_the_process_with_its_code(exits):
    guard = Hangup(lambda: False)
    guard.finished(0)  # the user quit; then the window was closed during Textual's shutdown
    assert exits == []
    guard.signalled(signal.SIGHUP)
    wait_until(lambda: exits, 30, "the exit")
    assert exits == [0]


def test_without_a_hangup_the_wizard_exits_as_it_always_did(exits):
    guard = Hangup(lambda: False)
    guard.signalled(signal.SIGTERM)
    with guard.ending():
        guard.finished(143)
    assert exits == [] and not guard.noticed


def test_a_headless_app_has_no_terminal_to_lose(exits):
    guard = Hangup(lambda: False)
    guard.signalled(signal.SIGHUP, headless=True)  # a test's app: pytest must live on
    with guard.ending():
        guard.finished(129)
    assert exits == [] and not guard.noticed


def test_a_wizard_that_ended_without_its_way_out_after_a_hangup_exits_129(exits):
    guard = Hangup(lambda: False)
    guard.signalled(signal.SIGHUP)
    with pytest.raises(RuntimeError), guard.ending():
        raise RuntimeError("the app crashed")  # with the real os._exit this goes no further
    assert exits == [129]


def test_a_session_is_busy_while_it_deletes():
    session = Session(practice=True, project="practice-project")
    cloud = MemoryCloud()
    session.clouds.use(cloud)
    owner = paths.owner_label()
    cloud.create_node(
        NodeRequest("us-central1-a", "n1", parse_accelerator("v5litepod-1"), "run-1", owner=owner)
    )
    resource = Resource("node", cloud.project, "us-central1-a", "n1", "v5litepod-1", "run-1", owner)
    session.ledger.record("created", resource)
    busy_at_delete: list[bool] = []
    cloud.on_delete = lambda zone, name: busy_at_delete.append(session.busy)
    assert not session.busy
    assert [r.verified for r in session.delete([resource])] == [True]
    assert busy_at_delete == [True] and not session.busy


def test_a_session_is_busy_while_its_launch_thread_runs(tmp_path, monkeypatch):

    release = threading.Event()

    def slow_start(*args, **kwargs):  # the launch thread, still at work (creating, deleting)
        release.wait(30)
        raise RuntimeError("stopped here")

    monkeypatch.setattr(runtime, "build_runtime", slow_start)
    monkeypatch.setattr(Session, "cloud_for", lambda self, backend: object())
    session = Session(practice=True)
    plan = launch_plan("v5litepod-4", "us-central1-a", "tpuwizard-practice", "r1", tmp_path / "r1")
    handle = session.start_launch(checked(plan))
    consumer = threading.Thread(target=lambda: list(handle.events()))
    consumer.start()
    wait_until(lambda: handle.running, 30, "the launch thread")
    assert session.busy
    release.set()
    consumer.join(30)
    assert not handle.running and not session.busy
