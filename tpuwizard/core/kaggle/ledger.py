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

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core import untrusted
from tpuwizard.core.errors import LedgerUnwritable
from tpuwizard.core.launch.records.ledger_file import Appender, Held, LedgerFile, append_lines

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

OPS = ("intent", "pushed", "ended", "deleted")
LEDGER_FILE = "kaggle-ledger.jsonl"  # in tpuwizard's state folder


class KernelLedger:
    def __init__(
        self, path: Path, fallback_base: Path | None = None, append: Appender = append_lines
    ) -> None:
        """As the TPU ledger's: ``fallback_base`` holds refused records (the system's temporary
        folder), ``append`` writes a line (a test makes the disk refuse through it)."""
        self.path = path
        self.file = LedgerFile(path, fallback_base, append)

    def record(self, op: str, kernel: str, run_id: str, **extra: Any) -> Held | None:
        """Append one record and fsync it before returning; None once it is in the ledger.
        A disk that refuses it: held and read with the others until the disk takes it (the
        answer says where). An ``intent`` is not held: :class:`LedgerUnwritable`, and the push
        (or session) it would announce must not happen."""
        if op not in OPS:
            raise ValueError(f"unknown kernel ledger op {op!r}")
        data = {"op": op, "at": time.time(), "kernel": kernel, "run_id": run_id, **extra}
        line = json.dumps(data, sort_keys=True).encode() + b"\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return self.file.append(line, hold=op != "intent")
        except OSError as err:  # an intent's, or a folder that cannot be made
            if op == "intent":
                raise LedgerUnwritable(self.path, err) from err
            return self.file.append(line)  # held: the folder refuses as the file would

    def records(self) -> list[dict[str, Any]]:
        """Every readable record, in order; unreadable lines (torn, not UTF-8, nested past a
        record's depth) are skipped; the records held while the disk refused come last. Read
        as untrusted input (core/untrusted.py): a ledger that is no regular file, or is past
        its bound, raises :class:`~tpuwizard.core.untrusted.NotASmallFile` rather than reading
        as empty."""
        found = []
        for line in self.file.read().split(b"\n"):
            try:
                data = untrusted.loads(line.decode("utf-8"), max_depth=8)
            except ValueError:  # UnicodeDecodeError and BadJson are ValueErrors
                continue
            if isinstance(data, dict) and data.get("op") in OPS:
                found.append(data)
        return found

    def last_words(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Each (kernel, run id)'s latest record; unreadable lines are skipped."""
        latest: dict[tuple[str, str], dict[str, Any]] = {}
        for data in self.records():
            latest[(str(data.get("kernel")), str(data.get("run_id")))] = data
        return latest

    def open_sessions(self) -> list[dict[str, Any]]:
        """Records whose session may still be running (last word ``intent`` or ``pushed``)."""
        return [d for d in self.last_words().values() if d["op"] in ("intent", "pushed")]

    def held(self) -> list[dict[str, Any]]:
        """Records of kernels that may still be in the account (last word not ``deleted``),
        oldest first, each with the fields of its earlier records beneath its last word's."""
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        for data in self.records():
            key = (str(data.get("kernel")), str(data.get("run_id")))
            merged[key] = {**merged.get(key, {}), **data}
        return [d for d in merged.values() if d["op"] != "deleted"]


def unreadable(path: Path) -> str | None:
    """Why the ledger at ``path`` (Kaggle's or Colab's) cannot be read, in words (a FIFO, a
    folder, a file past its bound, no permission), else None (a missing one reads as empty):
    ``status`` and ``teardown`` say it and go on with the TPUs, which it does not hold."""
    try:
        KernelLedger(path).records()
    except OSError as err:
        return untrusted.describe(err)
    return None


def said_held(held: Held | None, kernel: str, op: str) -> list[LedgerRecordHeld]:
    """The event that says the disk refused ``op``'s record of ``kernel`` (a Kaggle kernel, a
    Colab session) and where it is held; none once it was written."""
    if held is None:
        return []
    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

    return [LedgerRecordHeld(kernel, op, *held.facts())]


def held_as_json(unrecorded: Sequence[LedgerRecordHeld]) -> dict[str, Any]:
    """``records_held`` for a ``--json`` document (``status``, ``teardown``): each record the
    disk refused, and where it is held (null: this command's memory); nothing when none was."""
    if not unrecorded:
        return {}
    return {
        "records_held": [
            {"op": h.op, "reason": h.reason, "ledger": h.ledger, "kept_in": h.kept_in}
            for h in unrecorded
        ]
    }


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
