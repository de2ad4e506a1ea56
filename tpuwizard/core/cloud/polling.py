"""Waiting on the TPU API: poll until a state is reached, a dead end is named, or time runs out.

Pauses are taken in small steps so that a cancel is noticed within a tenth of a second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tpuwizard.core.cancel import Cancelled
from tpuwizard.core.errors import CreateFailed, WaitTimedOut

REPORT_EVERY_S = 60.0


def poll_until(
    what: str,
    read: Callable[[], Any],
    ready: str,
    failure: Callable[[Any, str], str | None],
    on_state: Callable[[str], None] | None,
    timeout: float,
    poll: float,
    cancelled: Callable[[], bool] | None,
) -> Any:
    """Read until the state is ``ready``, reporting each change; ``failure`` names a dead end.

    Raises :class:`CreateFailed` at a dead end and :class:`WaitTimedOut` after ``timeout``.
    """
    deadline = time.monotonic() + timeout
    last, reported = None, time.monotonic()
    while True:
        item = read()
        state = item.state if item is not None else "NOT_FOUND"
        # Each change, and a reminder every REPORT_EVERY_S while nothing changes: a spot request
        # can wait for capacity for half an hour, and silence looks like a hang.
        if state != last or time.monotonic() - reported >= REPORT_EVERY_S:
            last, reported = state, time.monotonic()
            if on_state:
                on_state(state)
        if item is not None and state == ready:
            return item
        reason = failure(item, state)
        if reason:
            raise CreateFailed(RuntimeError(reason))
        if time.monotonic() >= deadline:
            raise WaitTimedOut(what, state, timeout)
        pause(poll, cancelled)


def pause(seconds: float, cancelled: Callable[[], bool] | None) -> None:
    """Sleep between polls, in small steps so that a cancel is noticed quickly."""
    end = time.monotonic() + seconds
    while True:
        if cancelled is not None and cancelled():
            raise Cancelled("stopped while waiting")
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.1))
