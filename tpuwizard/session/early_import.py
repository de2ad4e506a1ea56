"""Compute Engine's client library takes seconds to import (``google.cloud.compute_v1``: 3.35 s
on a quiet machine here), and every survey of this user's resources opens it: the leftover
check and ``status`` list both backends. Imported in a thread from their start, that time
passes beside what comes first (the practice sandbox starting, the TPU API's survey, the user
reading the first step) instead of after it (benchmarks/leftover_check.py)."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading

COMPUTE_LIBRARY = "google.cloud.compute_v1"
_started = threading.Event()


def import_compute_early() -> None:
    """Start importing Compute Engine's library in a daemon thread (once a process). Whoever
    opens Compute Engine later waits on Python's own import lock for what is left of it."""
    if COMPUTE_LIBRARY in sys.modules or _started.is_set():
        return
    _started.set()
    threading.Thread(target=_import, name="import-compute", daemon=True).start()


def _import() -> None:
    # A failure here is the opener's to meet and say, on its own import, with its context.
    with contextlib.suppress(Exception):
        importlib.import_module(COMPUTE_LIBRARY)
