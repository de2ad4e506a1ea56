"""Signals during a launch: Ctrl+C, SIGTERM and SIGHUP mean "stop now and delete"."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

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
    return 128 + received[0] if received else code
