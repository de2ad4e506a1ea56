"""Stopping a launch from another thread (a signal handler, the TUI's quit guard)."""

from __future__ import annotations

import subprocess
import threading


class Cancelled(Exception):
    """The user or a signal asked to stop; teardown follows."""


class CancelToken:
    """Set from any thread; kills the subprocesses registered with it so that waits end at once."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.reason = ""

    def set(self, reason: str = "cancelled") -> None:
        self.reason = self.reason or reason
        self._event.set()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            if proc.poll() is None:
                proc.kill()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self.is_set():
            raise Cancelled(self.reason)

    def sleep(self, seconds: float) -> None:
        if self._event.wait(seconds):
            raise Cancelled(self.reason)

    def register(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)
        if self.is_set() and proc.poll() is None:
            proc.kill()

    def unregister(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)
