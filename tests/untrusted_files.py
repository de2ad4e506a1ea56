"""Hostile files in the places tpuwizard reads back (issue 48): a FIFO, ``/dev/zero``, a file past
its bound, JSON nested past the parser's depth. And a guard for a read that must not block."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

HOSTILE = ("fifo", "dev-zero", "folder")


def put_hostile(path: Path, kind: str) -> Path:
    """Put a FIFO, a link to /dev/zero or a folder where ``path`` is read from."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:  # pragma: no cover - a test's typo
        raise ValueError(kind)
    return path


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def within(seconds: float, call: Callable[[], T], what: str = "the read") -> T:
    """``call()``'s result (or its exception, raised here), failing the test if it has not
    returned within ``seconds``: a read blocked on a FIFO is left in a daemon thread, not the
    test run."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as err:  # re-raised on the test's thread
            box["error"] = err

    thread = threading.Thread(target=run, name="untrusted-read", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"{what} did not return within {seconds:g} s (blocked on a FIFO?)")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
