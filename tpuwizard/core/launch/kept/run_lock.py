"""One run at a time on a kept node: its work folder is synced and run in by one command.

Two ``run``s at once would race the folder sync (one deletes what the other copies). The lock is
an ``flock`` on a file in the state folder, per node: the kernel releases it when its process
ends, however it ends, so a killed ``run`` never leaves the node locked. It covers the commands
of this computer, which are the ones that know the node (its ledger is here).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.cancel import CancelToken


@dataclass(frozen=True)
class LockHolder:
    """The command running on the node now."""

    pid: int
    started: float  # seconds since the epoch
    command: str

    def words(self) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.started))
        return f"`{self.command}` (pid {self.pid}, started at {when})"


class NodeBusy(Exception):
    """Another run holds the node's work folder; ``holder`` is who, when it could be read."""

    def __init__(self, node: str, holder: LockHolder | None) -> None:
        self.node, self.holder = node, holder
        who = holder.words() if holder else "another tpuwizard command"
        super().__init__(
            f"{node} is busy: {who} is running on it. Wait for it to end, or give --wait to "
            "start once it has."
        )


def lock_path(state_dir: Path, zone: str, node: str) -> Path:
    return state_dir / "locks" / f"{zone}--{node}.lock"


@contextlib.contextmanager
def run_lock(
    path: Path,
    node: str,
    command: str,
    wait: bool = False,
    cancel: CancelToken | None = None,
    on_wait: Callable[[str], None] | None = None,
    poll: float = 0.2,
) -> Iterator[None]:
    """Hold the node's run lock inside; :class:`NodeBusy` at once when another holds it, or,
    with ``wait``, wait for it (a cancel ends the wait with ``Cancelled``)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _try_lock(fd):
            holder = _read_holder(fd)
            if not wait:
                raise NodeBusy(node, holder)
            if on_wait is not None:
                who = holder.words() if holder else "another tpuwizard command"
                on_wait(f"{node} is busy with {who}; waiting for it to end...")
            while not _try_lock(fd):  # polled, not blocking: a stop signal must end the wait
                (cancel or CancelToken()).sleep(poll)
        os.ftruncate(fd, 0)
        record = {"pid": os.getpid(), "started": time.time(), "command": command}
        os.pwrite(fd, json.dumps(record).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read_holder(fd: int) -> LockHolder | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"null")
        return LockHolder(int(data["pid"]), float(data["started"]), str(data["command"]))
    except (ValueError, TypeError, KeyError, OSError):
        return None  # written as we read, or by hand: the refusal still holds
