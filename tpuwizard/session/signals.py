"""Stop signals (Ctrl+C, SIGTERM, SIGHUP): during a launch they mean "stop now and delete";
on a kept node (``run``, ``watch``) "stop the script, keep the node"."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING

from tpuwizard.core.exit_codes import for_signal

if TYPE_CHECKING:
    from tpuwizard.core.cancel import CancelToken
    from tpuwizard.session.launch_handle import LaunchHandle

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def stop_on_signals(handle: LaunchHandle, announce: Callable[[str], None]) -> Iterator[list[int]]:
    """While inside, a stop signal cancels the launch at once (its teardown follows).

    Yields the list of signals received: the front end exits with 128 + the first one.
    """
    received: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if not received:
            announce(f"\n{name}: stopping now and deleting what this run created. Please wait...")
        received.append(signum)
        handle.stop_for_signal(signum, name)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def exit_code(received: list[int], code: int) -> int:
    """The code a front end exits with: 128 + the first stop signal, else the launch's own."""
    return for_signal(received[0]) if received else code


class StopScriptOnSignals:
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
    ) -> None:
        import threading

        from tpuwizard.core.cancel import CancelToken

        self.announce, self.words = announce, words
        self.token = CancelToken()
        self.first: int | None = None
        self.ended = threading.Event()

    def next_run(self) -> CancelToken:
        """The token for the next run: a fresh one, unless a stop has come (then it is set)."""
        from tpuwizard.core.cancel import CancelToken

        if self.first is None:
            self.token = CancelToken()
            if self.first is not None:  # a stop came in between: it stops this run too
                self.token.set(signal.Signals(self.first).name, for_signal(self.first))
        return self.token

    def exit_code(self, code: int) -> int:
        return for_signal(self.first) if self.first is not None else code

    def __enter__(self) -> StopScriptOnSignals:
        def stop(signum: int, _frame: FrameType | None) -> None:
            name = signal.Signals(signum).name
            if self.first is None:
                self.first = signum
                with contextlib.suppress(OSError):  # after SIGHUP there may be no terminal
                    self.announce(f"\n{name}: {self.words}")
            self.ended.set()
            self.token.set(name, for_signal(signum))

        self.previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
