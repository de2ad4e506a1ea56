"""Stopping a launch from another thread (a signal handler, the TUI's quit guard).

Two intents reach a running launch: *stop and delete* (Delete now, Ctrl+C, SIGTERM, SIGHUP) and
*stop following and keep* (Keep it running). Both end every wait at once by killing the local
processes registered here (followers, ssh); what happens to the resource is the launch's call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading

KEEP_PENDING = "pending"  # the watchdog that makes keeping safe is not armed yet
KEEP_SAFE = "safe"  # armed (or the plan has another deadline, or the user chose none)
KEEP_UNSAFE = "unsafe"  # it could not be armed


class Cancelled(Exception):
    """The user or a signal asked to stop; teardown (or keeping) follows."""


class CancelToken:
    """Set from any thread; kills the subprocesses registered with it so that waits end at once."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.reason = ""
        # The code the process exits with after this stop, when the stopper says (a signal's
        # 128 + N): the stopped run's own Finished event then says it too.
        self.exit_code: int | None = None
        self.keep = False  # True when the user asked to keep what exists running
        # Keep asked for before the node can be kept safely (its watchdog not yet armed):
        # the launch settles it once the watchdog is armed, or asks again when arming fails.
        self.keep_asked = False
        self.keep_safety = KEEP_PENDING

    def set(self, reason: str = "cancelled", exit_code: int | None = None) -> None:
        """Stop now; what this launch created and was not told to keep is deleted. The first
        stop's reason and exit code stand."""
        if not self._event.is_set():
            self.exit_code = exit_code
        self.reason = self.reason or reason
        self._event.set()
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            kill_tree(proc)

    def request_keep(self) -> None:
        """Stop following and leave what exists running (it keeps billing)."""
        self.keep = True
        self.set("kept")

    def ask_to_keep(self) -> str:
        """Keep, once it is safe to: returns ``KEEP_SAFE`` (kept now), ``KEEP_PENDING`` (kept
        as soon as the watchdog is armed; a stop before that still deletes) or ``KEEP_UNSAFE``
        (no watchdog could be armed: the user must choose delete, or keep without one)."""
        with self._lock:
            self.keep_asked = True
            safety = self.keep_safety
        if safety == KEEP_SAFE:
            self.request_keep()
        return safety

    def settle_keep(self, safety: str) -> bool:
        """The launch says whether keeping is safe now; True when a keep was waiting on it
        (kept at once when safe; when unsafe, the launch waits for the user's answer)."""
        with self._lock:
            self.keep_safety = safety
            asked = self.keep_asked
        if asked and safety == KEEP_SAFE:
            self.request_keep()
        return asked

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
        if self.is_set():
            kill_tree(proc)

    def unregister(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)


def kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and, when it leads its own session, every process it started."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, signal.SIGKILL)
            return
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
