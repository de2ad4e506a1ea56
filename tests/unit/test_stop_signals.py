"""The one stop path (session/signals.py) with a terminal that is gone: every write raises EIO, and
still the first stop signal stops the launch (its teardown runs, the command exits 128 + N), a
second one 10 ms later changes nothing, and the launch's thread has ended before the front end
goes on. A closed pipe on stdout costs its lines only."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import threading
import time

import pytest

from tests.fakes import checked
from tests.plans import launch_plan
from tests.waiting import wait_until
from tpuwizard.commands.common import say, show, show_event
from tpuwizard.core.cancel import Cancelled
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.session import runtime
from tpuwizard.session.gone_terminal import DroppingStream, drop_output_to_gone_terminals
from tpuwizard.session.run_outcome import OUTCOME_FILE
from tpuwizard.session.session import Session
from tpuwizard.session.signals import (
    STOP_SIGNALS,
    StopScriptOnSignals,
    StopSignals,
    exit_code,
    stop_on_signals,
)
from tpuwizard.words.event_text import handed_over_stop_words


class GoneTerminal(io.StringIO):
    """A terminal after its window was closed: every write and flush answers EIO."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def write(self, text: str) -> int:
        self.tries += 1
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")


@pytest.fixture(autouse=True)
def handlers_restored():
    """A stop absorbs signals after its block (the process is on its way out): put pytest's
    own handlers back after each test."""
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def gone_terminal(monkeypatch) -> GoneTerminal:
    """stdout and stderr on a terminal that is gone, as the CLI sees them (cli.py guards them).
    Called in the test itself: pytest puts its own capture back after fixtures ran."""
    terminal = GoneTerminal()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setattr("sys.stderr", terminal)
    drop_output_to_gone_terminals()
    return terminal


def eio(_text: str) -> None:
    raise OSError(errno.EIO, "Input/output error")


def test_every_commands_output_to_a_gone_terminal_is_dropped_not_raised(monkeypatch):
    gone = gone_terminal(monkeypatch)
    say("a note")
    show("a result")
    show_event(ev.ScriptLine(0, "tick 1"), as_json=False)
    show_event(ev.ScriptLine(0, "tick 2"), as_json=True)
    print("plain mode's own line")
    assert gone.tries == 2  # stdout and stderr each found it gone once; no more was tried


def test_a_closed_pipe_on_stdout_is_pointed_at_dev_null_for_every_later_writer():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away (`tpuwizard launch ... | head -1`, head done)
    stream = DroppingStream(os.fdopen(write_end, "w"))
    try:
        stream.write("a line\n")
        stream.flush()  # EPIPE: dropped
        assert stream.gone
        assert os.write(write_end, b"a child's line\n") == 15  # /dev/null takes it
    finally:
        stream.stream.close()


def test_an_error_that_is_not_a_gone_terminal_still_raises():
    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        DroppingStream(Full()).write("text")


def test_the_first_signal_stops_even_when_its_announcement_fails_and_a_second_changes_nothing():
    stops: list[int] = []
    with StopSignals(eio, "stopping now", stops.append) as stop:
        signal.raise_signal(signal.SIGHUP)  # the OSError of the announcement must not come here
        signal.raise_signal(signal.SIGTERM)
    signal.raise_signal(signal.SIGHUP)  # after the block: absorbed (still not pytest's death)
    assert stops == [signal.SIGHUP]
    assert stop.received == [signal.SIGHUP, signal.SIGTERM, signal.SIGHUP]
    assert stop.exit_code(0) == 129


def test_without_a_stop_the_handlers_are_given_back():
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals(eio, "stopping now"):
        assert signal.getsignal(signal.SIGTERM) != before
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_script_stop_sets_its_token_once_with_the_first_signals_code():
    with StopScriptOnSignals(eio) as stop:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGHUP)
    assert stop.token.is_set() and stop.token.exit_code == 130
    assert stop.next_run() is stop.token  # a stop came: no fresh run after it


def fake_launch(monkeypatch, deleted: list[str], hang_up: bool = False) -> None:
    """A launch whose script runs until it is stopped, then deletes (said in ``deleted``). With
    ``hang_up``, the terminal is closed during the script: SIGHUP, and again 10 ms later (the
    shell passes it on, and the kernel sends it too)."""

    def run_launch(plan, rt, emit, cancel) -> None:
        emit(ev.ScriptLine(0, "tick 0"))
        if hang_up:
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGHUP)  # both sent before the launch can end
        try:
            while True:
                cancel.sleep(0.01)
        except Cancelled:
            deleted.append(cancel.reason)
            emit(ev.Finished(False, 1, str(plan.run_dir), 0.0))

    class Runtime:
        ready_timeout = reruns = None

    monkeypatch.setattr("tpuwizard.core.launch.lifecycle.launch.run_launch", run_launch)
    monkeypatch.setattr(runtime, "build_runtime", lambda *args, **kwargs: Runtime())
    monkeypatch.setattr(Session, "cloud_for", lambda self, backend: object())


def start(tmp_path):
    plan = launch_plan("v5litepod-4", "us-central1-a", "tpuwizard-practice", "r1", tmp_path / "r1")
    plan.run_dir.mkdir()
    return Session(practice=True).start_launch(checked(plan))


def test_a_hangup_during_the_script_deletes_once_and_exits_129_on_a_gone_terminal(
    tmp_path, monkeypatch
):
    gone = gone_terminal(monkeypatch)
    deleted: list[str] = []
    fake_launch(monkeypatch, deleted, hang_up=True)
    handle = start(tmp_path)
    code = 0
    with stop_on_signals(handle, say, handed_over_stop_words) as received:
        for event in handle.events():
            show_event(event, as_json=False)
            if isinstance(event, ev.Finished):
                code = event.exit_code
        wait_until(lambda: len(received) == 2, 30, "the second SIGHUP")
    assert deleted == ["SIGHUP"] and not handle.running and gone.tries == 2
    assert exit_code(received, code) == 129 and code == 129
    outcome = json.loads((tmp_path / "r1" / OUTCOME_FILE).read_text())
    assert (outcome["exit_code"], outcome["stopped_by"]) == (129, "SIGHUP")


def test_plain_mode_on_a_gone_terminal_deletes_once_and_exits_129(tmp_path, monkeypatch):
    from tpuwizard.plain.walk import PlainWizard

    gone_terminal(monkeypatch)
    deleted: list[str] = []
    fake_launch(monkeypatch, deleted, hang_up=True)
    handle = start(tmp_path)
    assert PlainWizard(sandbox=True).launch(handle) == 129
    assert deleted == ["SIGHUP"] and not handle.running


def test_a_front_end_that_fails_mid_launch_leaves_only_after_the_launch_stopped(
    tmp_path, monkeypatch
):
    deleted: list[str] = []
    fake_launch(monkeypatch, deleted)
    handle = start(tmp_path)
    with pytest.raises(RuntimeError), stop_on_signals(handle, eio, handed_over_stop_words):
        for _event in handle.events():
            raise RuntimeError("a bug in the front end")
    assert not handle.running  # no thread of it outlives its command with a node alive
    assert deleted == ["the command ended before its launch did"]


def test_ssh_ends_its_shell_on_a_hangup_keeps_the_node_and_exits_129(tmp_path, monkeypatch):
    import contextlib

    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.commands import iterate

    started = tmp_path / "started"

    class Kept:  # the kept node: its shell is a local one that waits to be ended
        name = "dev"

        def shell_command(self, worker):
            return ["sh", "-c", f"touch {started}; exec sleep 60"], None, None

        def keep_alive(self, say):
            return contextlib.nullcontext()

    def hang_up() -> None:
        wait_until(started.exists, 30, "the shell")
        os.kill(os.getpid(), signal.SIGHUP)

    monkeypatch.setattr(iterate, "open_session", lambda project, sandbox: object())
    monkeypatch.setattr(iterate, "open_kept", lambda session, node: Kept())
    hangup = threading.Thread(target=hang_up)
    hangup.start()
    result = CliRunner().invoke(main, ["ssh", "--sandbox"])
    hangup.join()
    assert result.exit_code == 129, result.output
    assert "SIGHUP: ending the shell (the node stays)." in result.output


LATE_SIGNAL_CHILD = """
import os, signal, sys, time
import click
from tpuwizard.commands.common import at_command_end, say
from tpuwizard.session.signals import stop_on_signals

class HandedOver:  # a launch whose node was handed over; its thread has ended
    handed_over = "node-1"
    def stop_for_signal(self, signum, name):
        raise AssertionError("no stop before the hand-over here")
    def stop_and_wait(self):
        pass

def late_signal():  # a close callback of the command's, as a price read's end is
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.5)  # the handler runs here, inside the callback
    print("the close callback ran on", flush=True)

@click.group()
def cli():
    pass

@cli.command()
def up():
    click.get_current_context().call_on_close(late_signal)  # registered first: runs last
    words = lambda kept, code: f"{kept} stays kept; exit {code}."
    with stop_on_signals(HandedOver(), say, words, at_command_end()):
        pass
    say("Summary: node-1 is kept. Exit code 0.")
    sys.exit(0)

cli()
"""


def test_a_signal_inside_a_close_callback_after_the_hand_over_exits_128_n_with_its_words():
    """Issue 56: the handlers were put back before the command's other close callbacks ran, so
    a SIGTERM during one ended the command by the raw signal (-15), with no word said."""
    import subprocess
    import sys

    from tests.conftest import REPO

    child = subprocess.run(
        [sys.executable, "-c", LATE_SIGNAL_CHILD, "up"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = child.stdout + child.stderr
    assert child.returncode == 143, (child.returncode, said)
    assert "Summary: node-1 is kept. Exit code 0." in said
    assert "SIGTERM: node-1 stays kept; exit 143." in said
