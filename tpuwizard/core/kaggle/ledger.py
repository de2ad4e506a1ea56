"""The record of every kernel session tpuwizard starts on Kaggle, written before the push.

JSON lines, appended under an exclusive lock and fsynced, like the TPU ledger (whose records
name Google resources by project and zone, which a kernel has not). Ops: ``intent`` before the
push, ``pushed`` once Kaggle accepted it, ``ended`` once Kaggle said its session ended (the
kernel itself stays in the account as the run's record), ``deleted`` once Kaggle said the kernel
is not found (deleted by ``teardown`` or ``--delete-kernel``, or never landed; a practice kernel
once the stand-in that ran it ended). Nothing bills money; the weekly quota is spent while a
session runs, so a kernel whose last word is ``intent`` or ``pushed`` may still spend it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

OPS = ("intent", "pushed", "ended", "deleted")
LEDGER_FILE = "kaggle-ledger.jsonl"  # in tpuwizard's state folder


class KernelLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, op: str, kernel: str, run_id: str, **extra: Any) -> None:
        """Append one record and fsync it before returning."""
        if op not in OPS:
            raise ValueError(f"unknown kernel ledger op {op!r}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"op": op, "at": time.time(), "kernel": kernel, "run_id": run_id, **extra}
        line = json.dumps(data, sort_keys=True).encode() + b"\n"
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":  # a torn last line: start anew
                line = b"\n" + line
            os.write(fd, line)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def last_words(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Each (kernel, run id)'s latest record; unreadable lines are skipped."""
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return latest
        for raw in text.splitlines():
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("op") in OPS:
                latest[(str(data.get("kernel")), str(data.get("run_id")))] = data
        return latest

    def open_sessions(self) -> list[dict[str, Any]]:
        """Records whose session may still be running (last word ``intent`` or ``pushed``)."""
        return [d for d in self.last_words().values() if d["op"] in ("intent", "pushed")]

    def held(self) -> list[dict[str, Any]]:
        """Records of kernels that may still be in the account (last word not ``deleted``),
        oldest first, each with the fields of its earlier records beneath its last word's."""
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return []
        for raw in text.splitlines():
            try:
                data = json.loads(raw)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("op") in OPS:
                key = (str(data.get("kernel")), str(data.get("run_id")))
                merged[key] = {**merged.get(key, {}), **data}
        return [d for d in merged.values() if d["op"] != "deleted"]


def writer_alive(pid: object) -> bool:
    """Whether the process that wrote a record (its ``pid``) still runs: a run still following
    its kernel or session ends it itself, so ``status`` and ``teardown`` leave it alone."""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it runs, as another user
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process that ended and was never reaped (a container whose first process reaps none):
    it answers ``kill(pid, 0)`` but runs nothing. Read from Linux's /proc; False elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]
