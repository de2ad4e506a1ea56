"""Waiting for a condition in tests, never for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout: float, what: str = "the condition", interval: float = 0.02
) -> T:
    """Poll ``condition`` until it returns something true and return that; fail at ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


async def wait_until_async(
    condition: Callable[[], T], timeout: float, what: str = "the condition", interval: float = 0.05
) -> T:
    """:func:`wait_until` for a test on an event loop: sleeps without blocking the loop (a
    Textual app may run beside it)."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(interval)
