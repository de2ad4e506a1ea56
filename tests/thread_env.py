"""A guard against threads that outlive their test and then write os.environ.

Practice mode exports its sandbox's address (and Kaggle's stand-in its settings) into this
process's environment, often from a background thread (a price read, a preflight worker, the
kept nodes' heartbeats). Such a thread left running by one test can export during a later test
in the same xdist worker, which then sees a sandbox it never started. Each thread is marked with
the test that started it (a thread started by a marked thread inherits the mark); a write to
os.environ from a thread marked with another test is noted, and the test it happened in fails
at its end naming the thread and the test that left it (that one must end what it started).
"""

from __future__ import annotations

import os
import threading
from typing import Any

_current: list[str | None] = [None]  # the running test's id (None between tests)
_foreign: list[str] = []  # writes by a thread another test left running, not yet reported
_installed: list[bool] = []
ORIGIN = "_tpuwizard_test"  # the attribute that marks a thread with the test that started it


def install() -> None:
    """Mark every thread started from now on, and watch os.environ's writes (once a process)."""
    if _installed:
        return
    _installed.append(True)
    start = threading.Thread.start

    def marked_start(self: threading.Thread, *args: Any, **kwargs: Any) -> None:
        parent = threading.current_thread()
        setattr(self, ORIGIN, getattr(parent, ORIGIN, None) or _current[0])
        start(self, *args, **kwargs)

    threading.Thread.start = marked_start  # type: ignore[method-assign]
    environ = type(os.environ)
    set_item, del_item = environ.__setitem__, environ.__delitem__

    def watched_set(self: Any, key: str, value: str) -> None:
        _note(key)
        set_item(self, key, value)

    def watched_del(self: Any, key: str) -> None:
        _note(key)
        del_item(self, key)

    environ.__setitem__ = watched_set  # type: ignore[method-assign]
    environ.__delitem__ = watched_del  # type: ignore[method-assign]


def _note(key: str) -> None:
    thread = threading.current_thread()
    if thread is threading.main_thread():
        return  # the test itself (or its fixtures): monkeypatch restores what matters
    origin = getattr(thread, ORIGIN, None)
    if origin is not None and origin != _current[0]:
        during = f"during {_current[0]}" if _current[0] else "between tests"
        _foreign.append(
            f"os.environ[{key!r}] written {during} by thread {thread.name!r}, which {origin} "
            "started and left running"
        )


def begin(test_id: str) -> None:
    _current[0] = test_id


def end() -> list[str]:
    """The foreign writes since the last test ended (this test's, and any between tests)."""
    _current[0] = None
    found = list(_foreign)
    _foreign.clear()
    return found
