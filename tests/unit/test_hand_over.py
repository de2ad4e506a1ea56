"""The hand-over (issue 56, item 5): the launch's Kept event, once it reached the front end with no
stop before it, is the one fact a stop signal reads. Before it a stop deletes what the launch made
(said so); after it the node stays kept (said so, with what ends it), the summary still says the
exit code, and the code is 128 + N, also for a signal that lands after the front end's block."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import replace

import pytest

from tests.fakes import checked
from tests.plans import launch_plan
from tpuwizard.core.cancel import Cancelled
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.session import runtime
from tpuwizard.session.session import Session
from tpuwizard.session.signals import LAUNCH_STOP_WORDS, STOP_SIGNALS, exit_code, stop_on_signals
from tpuwizard.words.event_text import handed_over_stop_words
from tpuwizard.words.kept_end import end_it_words, kept_end_sentence
from tpuwizard.words.summary_text import summary_lines

NAME = "tpu-kept"
KEPT = ev.Kept(
    NAME,
    "us-central1-a",
    f"tpuwizard teardown {NAME} --sandbox",
    4.8,
    deadline=1796557492.0,
    ended_by=EndedBy.WATCHDOG,
    practice=True,
)


@pytest.fixture(autouse=True)
def handlers_restored():
    """A stop absorbs signals after its block: put pytest's own handlers back after each test."""
    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def keeping_launch(monkeypatch, deleted: list[str], go: threading.Event) -> None:
    """A launch that keeps its node (its Kept event), then waits for ``go`` before Finished; a
    stop before Kept makes it delete instead (said in ``deleted``), as the core's ending does."""

    def run_launch(plan, rt, emit, cancel) -> None:
        emit(ev.ScriptLine(0, "tick 0"))
        go.wait(30)
        if cancel.is_set():
            deleted.append(cancel.reason)
            emit(ev.Finished(False, 1, str(plan.run_dir), 0.0))
            return
        emit(KEPT)
        try:
            cancel.sleep(0.05)  # a stop after the hand-over does not reach the launch
        except Cancelled:
            deleted.append("a stop after the hand-over reached the launch")
        emit(ev.Finished(True, 0, str(plan.run_dir), 0.0, [NAME], practice=True))

    class Runtime:
        ready_timeout = reruns = None

    monkeypatch.setattr("tpuwizard.core.launch.lifecycle.launch.run_launch", run_launch)
    monkeypatch.setattr(runtime, "build_runtime", lambda *args, **kwargs: Runtime())
    monkeypatch.setattr(Session, "cloud_for", lambda self, backend: object())


def start(tmp_path):
    plan = launch_plan("v5litepod-4", "us-central1-a", "tpuwizard-practice", "r1", tmp_path / "r1")
    plan = replace(plan, deadline=Deadline(keep=True))
    plan.run_dir.mkdir()
    return Session(practice=True).start_launch(checked(plan))


@pytest.mark.parametrize(
    ("at", "sig", "handed", "words", "code"),
    [
        # a stop while the launch works: before the hand-over, it deletes (said so)
        (ev.ScriptLine, signal.SIGINT, False, LAUNCH_STOP_WORDS, 130),
        # a stop as "Kept" is printed: the node is the user's, kept (said so, with its end)
        (ev.Kept, signal.SIGTERM, True, handed_over_stop_words(KEPT, 143), 143),
        # a stop after Done: kept too, and the summary's code is the signal's
        (ev.Finished, signal.SIGHUP, True, handed_over_stop_words(KEPT, 129), 129),
    ],
)
def test_the_kept_event_decides_what_a_stop_does_and_says(
    tmp_path, monkeypatch, at, sig, handed, words, code
):
    deleted: list[str] = []
    go = threading.Event()
    keeping_launch(monkeypatch, deleted, go)
    handle = start(tmp_path)
    said: list[str] = []
    with stop_on_signals(handle, said.append, handed_over_stop_words) as received:
        for event in handle.events():
            if isinstance(event, ev.ScriptLine) and at is not ev.ScriptLine:
                go.set()
            if isinstance(event, at):
                os.kill(os.getpid(), sig)  # its handler runs before the next line
                go.set()
        handle.settle_stop_after_hand_over()
    assert said == [f"\n{sig.name}: {words}"]
    assert (handle.handed_over is not None) == handed
    assert deleted == ([] if handed else [sig.name])
    assert exit_code(received, 0) == code
    assert handle.finished is not None and handle.finished.exit_code == code
    summary = "\n".join(summary_lines(handle.summary))
    assert f"Exit code {code}." in summary
    assert (end_it_words(NAME, KEPT.practice) in summary) == handed  # its one command


def test_the_handed_over_words_say_it_stays_and_what_ends_it():
    words = handed_over_stop_words(KEPT)
    assert words.startswith(f"{NAME} was handed over already: it stays kept.")
    # Its end and its one command, each in the one sentence every view of a kept node says.
    end = kept_end_sentence(KEPT.idle_minutes, KEPT.deadline, KEPT.ended_by, KEPT.practice)
    assert end in words and end_it_words(NAME, KEPT.practice) in words
    unguarded = handed_over_stop_words(replace(KEPT, ended_by=EndedBy.NOTHING, deadline=None))
    assert "No watchdog guards it" in unguarded


def test_a_stop_after_the_block_keeps_the_node_and_exits_128_plus_n(tmp_path, monkeypatch):
    deleted: list[str] = []
    go = threading.Event()
    go.set()
    keeping_launch(monkeypatch, deleted, go)
    handle = start(tmp_path)
    said: list[str] = []
    held: list = []
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals(handle, said.append, handed_over_stop_words, held.append) as received:
        for _event in handle.events():
            pass
    assert received == [] and len(held) == 1  # the command's end puts the handlers back
    with pytest.raises(SystemExit) as ended:
        signal.raise_signal(signal.SIGTERM)  # as the command says its last lines
    assert ended.value.code == 143 and deleted == []
    # The summary was said already, with another code: the last line says this one.
    assert said == [f"\nSIGTERM: {handed_over_stop_words(KEPT, 143)}"]
    assert said[0].endswith(f"{end_it_words(NAME, KEPT.practice)} Exit code 143.")
    signal.raise_signal(signal.SIGHUP)  # a second one is absorbed
    held[0]()
    assert signal.getsignal(signal.SIGTERM) == before


def test_without_a_hand_over_nothing_holds_the_signals_after_the_block(tmp_path, monkeypatch):
    deleted: list[str] = []
    go = threading.Event()
    keeping_launch(monkeypatch, deleted, go)
    handle = start(tmp_path)
    held: list = []
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals(handle, lambda _t: None, handed_over_stop_words, held.append):
        handle.delete_now("Delete now")  # the wizard's Delete now: no hand-over follows
        go.set()
        for _event in handle.events():
            pass
    assert held == [] and handle.handed_over is None and deleted == ["Delete now"]
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize(
    ("practice", "in_process", "elsewhere", "done"),
    [
        # a price read opened this process's sandbox first: it moves to a lasting one now, on
        # its port and token, before the node is made (never two servers on one state)
        (True, True, False, ["moved, always"]),
        (True, False, False, ["lasting started"]),  # nothing opened yet: a lasting one
        (True, False, True, []),  # a lasting (or `sandbox serve`) one serves already
        (False, False, False, []),  # Google: nothing of practice
    ],
)
def test_a_keep_puts_the_practice_node_in_a_sandbox_that_outlives_the_command(
    monkeypatch, practice, in_process, elsewhere, done
):
    from tpuwizard.session.practice import sandbox as practice_mode

    calls: list[str] = []
    server = object()
    monkeypatch.setattr(
        practice_mode,
        "hand_over",
        lambda s, always=False: calls.append("moved, always" if always and s is server else "?"),
    )
    monkeypatch.setattr(
        practice_mode, "start_lasting_sandbox", lambda: calls.append("lasting started")
    )
    monkeypatch.setattr(practice_mode, "is_practice", lambda: elsewhere)
    session = Session(practice=practice)
    session._sandbox_server = server if in_process else None
    session.prepare_to_keep()
    assert calls == done and session._sandbox_server is None
