"""Keeps one practice Kaggle kernel's session apart from the command whose stand-in started it,
as Kaggle keeps a session apart from the client that pushed it: the kernel runs in a process
group of its own, its output goes to a file, and at its session limit (or when the stand-in,
ending with its command, asks by SIGTERM) the whole group is ended. A command killed outright
(SIGKILL) leaves its kernel running to its limit, as on Kaggle, and never beyond.

Run as a file, importing nothing of tpuwizard (so no install, path or signal of the command's
reaches it): ``python -I keeper.py FOLDER LIMIT_S LOCK_FD -- COMMAND...`` (LOCK_FD: the
stand-in's open descriptor of the lock, already taken, or -1). While it lives it holds
``session.lock`` in FOLDER; ``session.json`` says the session's state (RUNNING, then
COMPLETE or ERROR and why), the kernel's process group and when its limit falls.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

STATE_FILE = "session.json"
LOCK_FILE = "session.lock"
OUTPUT_FILE = "kernel-output.log"  # the kernel's stdout and stderr, as bytes
STOPPED_WORDS = "the practice stand-in ended with its command, and this session with it"
GROUP_GONE_S = 10.0  # how long the ended group's processes are given to leave the process table


def write_state(folder: str, **state: Any) -> None:
    """``session.json``, replaced whole: a reader never sees half of it."""
    part = os.path.join(folder, STATE_FILE + ".part")
    with open(part, "w") as f:
        json.dump(state, f)
    os.replace(part, os.path.join(folder, STATE_FILE))


def end_group(kernel: subprocess.Popen[bytes]) -> None:
    """Every process of the session's group killed, and waited for until none is left (the
    kernel reaped here first: a zombie still counts as one of its group)."""
    group = kernel.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    kernel.wait()
    deadline = time.monotonic() + GROUP_GONE_S
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(0.02)


def main(argv: list[str]) -> int:
    stop: list[int] = []
    # First of all: a stop that comes before the kernel starts is kept, never lost.
    signal.signal(signal.SIGTERM, lambda signum, _frame: stop.append(signum))
    folder, limit_s, lock_fd, command = argv[1], float(argv[2]), int(argv[3]), argv[5:]
    if lock_fd < 0:
        lock_fd = os.open(os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
    # Held until this process ends: the session may run. The stand-in hands over the lock it
    # took (LOCK_FD), so it is never free between the stand-in's start of this and now.
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    ends_at = time.time() + limit_s
    if stop:
        write_state(folder, state="ERROR", failure=STOPPED_WORDS, ends_at=ends_at)
        return 0
    with open(os.path.join(folder, OUTPUT_FILE), "ab") as out:
        kernel = subprocess.Popen(
            command,
            cwd=os.path.join(folder, "working"),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: ended whole, whatever it started
        )
    started = {"keeper": os.getpid(), "group": kernel.pid, "ends_at": ends_at, "limit_s": limit_s}
    write_state(folder, state="RUNNING", **started)
    code: int | None = None
    while not stop and code is None:
        left = ends_at - time.time()
        if left <= 0:
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = kernel.wait(timeout=min(0.2, left))
    end_group(kernel)  # what the kernel left running ends with its session, as on Kaggle
    if stop:
        state, failure = "ERROR", STOPPED_WORDS
    elif code is None:
        state, failure = "ERROR", f"the session reached its limit of {limit_s:.0f} s"
    elif code == 0:
        state, failure = "COMPLETE", None
    else:
        state, failure = "ERROR", f"the kernel's script exited {code}"
    write_state(folder, state=state, failure=failure, exit_code=code, **started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
