"""Stop signals (Ctrl+C, SIGTERM, SIGHUP): the one way every command and plain mode take them.

During a launch they mean "stop now and delete"; on a kept node (``run``, ``watch``) "stop the
script, keep the node"; during a teardown "finish the delete under way, then stop". The first
signal starts that stop; later ones are absorbed while it runs (a closed terminal's shell passes
SIGHUP on to its job, and the kernel sends it too). Nothing the stop does depends on the
terminal: its announcement is dropped when it cannot be written (gone_terminal.py), and the
launch's own thread is always ended and waited for before the command goes on to exit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from types import FrameType
from typing import TYPE_CHECKING, Any

from tpuwizard.core.exit_codes import for_signal
from tpuwizard.session.gone_terminal import quietly

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.core.launch.events.launch_events import Kept
    from tpuwizard.session.launch_handle import LaunchHandle

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LAUNCH_STOP_WORDS = "stopping now and deleting what this run created. Please wait..."


class StopSignals:
    """While inside, the first stop signal calls ``on_stop`` with it, then says ``words`` (when
    it can); later ones change nothing. Once a stop has come, stop signals stay absorbed after
    the block too (the process is on its way out with 128 + the first), unless
    ``absorb_after`` is false (a question follows: Ctrl+C must reach it).
    """

    def __init__(
        self,
        announce: Callable[[str], None],
        words: str,
        on_stop: Callable[[int], str | None] | None = None,
        absorb_after: bool = True,
    ) -> None:
        self.announce, self.words, self.on_stop = announce, words, on_stop
        self.absorb_after = absorb_after
        self.first: int | None = None
        self.received: list[int] = []  # every stop signal, the first first
        self.ended = threading.Event()  # set by the first
        self.previous: dict[int, Any] = {}

    def exit_code(self, code: int) -> int:
        """The code the command exits with: 128 + the first stop signal, else ``code``."""
        return for_signal(self.first) if self.first is not None else code

    def _signalled(self, signum: int, _frame: FrameType | None) -> None:
        self.received.append(signum)
        if self.first is not None:
            return  # absorbed: the stop under way is the first signal's
        self.first = signum
        self.ended.set()
        words = self.words
        try:
            if self.on_stop is not None:  # before any word: a terminal may block or fail
                words = self.on_stop(signum) or words  # what the stop does decides its words
        finally:
            quietly(self.announce, f"\n{signal.Signals(signum).name}: {words}")

    def __enter__(self) -> StopSignals:
        self.previous = {sig: signal.signal(sig, self._signalled) for sig in STOP_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        if self.first is not None and self.absorb_after:
            return
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


@contextmanager
def stop_on_signals(
    handle: LaunchHandle,
    announce: Callable[[str], None],
    kept_words: Callable[[Kept, int], str],
    hold_until: Callable[[Callable[[], None]], object] | None = None,
) -> Iterator[list[int]]:
    """While inside, a stop signal before the hand-over (``handle.handed_over``) cancels the
    launch at once (its teardown follows, said with ``LAUNCH_STOP_WORDS``); one after it keeps
    the node, said with ``kept_words`` of its Kept event and the exit code (a summary said
    before the signal landed said another). However the block is left (an error
    of the front end's included), the launch's thread has ended by then: a launch that is still
    going is stopped (what it created deleted) and waited for.

    Yields the list of signals received: the front end exits with 128 + the first one. With
    ``hold_until`` (a command's ``at_command_end``: after its close callbacks), a node handed
    over stays guarded to the command's end: a stop signal after the block says it stays kept
    and exits 128 + N, never the raw signal's death.
    """

    def stop(signum: int) -> str:
        kept = handle.stop_for_signal(signum, signal.Signals(signum).name)
        return LAUNCH_STOP_WORDS if kept is None else kept_words(kept, for_signal(signum))

    signals = StopSignals(announce, LAUNCH_STOP_WORDS, stop)
    with signals:
        try:
            yield signals.received
        finally:
            handle.stop_and_wait()
        kept = handle.handed_over
        if kept is not None and signals.first is None and hold_until is not None:
            # Left in place by StopSignals' exit (as what it restores), so that no moment
            # passes with the default handlers; put back at the command's end.
            before = signals.previous
            late = _exit_kept(announce, partial(kept_words, kept))
            signals.previous = dict.fromkeys(STOP_SIGNALS, late)
            hold_until(lambda: _put_back(before))


def _exit_kept(
    announce: Callable[[str], None], words: Callable[[int], str]
) -> Callable[[int, Any], None]:
    """A handler for after the hand-over: the first stop signal says ``words`` of the exit code
    (the node stays kept; the summary said another code) and ends the command with 128 + N;
    later ones are absorbed."""
    came: list[int] = []

    def exit_kept(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)
        if len(came) == 1:
            code = for_signal(signum)
            quietly(announce, f"\n{signal.Signals(signum).name}: {words(code)}")
            raise SystemExit(code)

    return exit_kept


def _put_back(handlers: dict[int, Any]) -> None:
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


def exit_code(received: list[int], code: int) -> int:
    """The code a front end exits with: 128 + the first stop signal, else the launch's own."""
    return for_signal(received[0]) if received else code


class StopScriptOnSignals(StopSignals):
    """On a kept node (``run``, ``watch``): Ctrl+C, SIGTERM and SIGHUP (a closed terminal) stop
    the script on the workers, never the node; the command then exits 128 + the first signal.

    ``token`` is the running script's: the stop sets it with that code, so the run's own
    ``Finished`` says it. ``watch`` takes a fresh one for each run (:meth:`next_run`) and ends
    its wait for a save when ``ended`` is set.
    """

    def __init__(
        self,
        announce: Callable[[str], None],
        words: str = "stopping your script (the node stays)...",
        absorb_after: bool = True,
    ) -> None:
        from tpuwizard.core.cancel import CancelToken

        super().__init__(announce, words, self._stop_script, absorb_after)
        self.token = CancelToken()

    def _stop_script(self, signum: int) -> None:
        self.token.set(signal.Signals(signum).name, for_signal(signum))

    def next_run(self) -> CancelToken:
        """The token for the next run: a fresh one, unless a stop has come (then it is set)."""
        from tpuwizard.core.cancel import CancelToken

        if self.first is None:
            self.token = CancelToken()
            if self.first is not None:  # a stop came in between: it stops this run too
                self._stop_script(self.first)
        return self.token

    def __enter__(self) -> StopScriptOnSignals:
        super().__enter__()
        return self


def signal_name(signum: int | None) -> str | None:
    """A stop signal's name as records say it ("SIGHUP", "SIGINT"); None for no signal."""
    if signum is None:
        return None
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)
