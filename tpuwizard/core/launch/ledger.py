"""The write-ahead ledger: a record of everything tpuwizard creates, written before it exists.

JSON lines, appended under an exclusive file lock and fsynced before the call they announce.
Each line names one resource *instance*: its kind, project, zone and name **plus the run id**
that created it, so a later run reusing a name never speaks for an earlier one. The ops:

* ``intent`` before every create call (so a crash mid-call still leaves a trace);
* ``created`` once the API accepted it;
* ``delete_pending`` when a delete was asked for but not yet verified (Google may refuse a
  delete for a while right after create);
* ``kept`` when the user chose to leave it running (with its deadline, if a watchdog holds one);
* ``gone`` only after a teardown was *verified* (get says NotFound and the list lacks it).

Folding the records gives, per instance, its last word; anything whose last word is not ``gone``
may still exist and may still bill. Extra fields (``owner``, ``deadline``...) ride along on any
record, so later work adds fields without a new format.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

OPS = ("intent", "created", "delete_pending", "kept", "gone")


@dataclass(frozen=True)
class Resource:
    """One thing tpuwizard created: a node or a queued resource, from one run."""

    kind: str  # "node" or "queued"
    project: str
    zone: str
    name: str
    accelerator: str
    run_id: str
    route: str = "vm"  # vm, spot, flex
    node_id: str | None = None  # for a queued resource: the node it asks for
    owner: str | None = None  # a label-safe hash of who created it

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """One instance: the same name from another run is another resource."""
        return (self.kind, self.project, self.zone, self.name, self.run_id)


@dataclass(frozen=True)
class Entry:
    resource: Resource
    op: str
    at: float
    first_at: float  # when the intent was recorded: the start of billing risk
    extra: dict[str, Any] = field(default_factory=dict)


_FIELDS = {f for f in Resource.__dataclass_fields__}


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, op: str, resource: Resource, **extra: Any) -> None:
        """Append one record and fsync it before returning."""
        if op not in OPS:
            raise ValueError(f"unknown ledger op {op!r}")
        data = {"op": op, "at": time.time(), **asdict(resource), **extra}
        line = json.dumps(data, sort_keys=True).encode() + b"\n"
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # A crash mid-write leaves a torn last line without its newline: start a new line,
            # or this record would be glued onto the torn one and lost with it.
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line
            os.write(fd, line)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def entries(self) -> list[Entry]:
        """Every resource instance's latest record, in the order they were first recorded.

        Lines that cannot be read (torn by a crash, edited by hand) are skipped.
        """
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH)
            lines = f.read().split(b"\n")
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        folded: dict[tuple[str, ...], Entry] = {}
        for raw in lines:
            parsed = _parse(raw)
            if parsed is None:
                continue
            op, at, resource, extra = parsed
            previous = folded.get(resource.key)
            first = previous.first_at if previous else at
            merged = {**(previous.extra if previous else {}), **extra}
            folded[resource.key] = Entry(resource, op, at, first, merged)
        return list(folded.values())

    def open_entries(self) -> list[Entry]:
        """What may still exist: every resource instance whose last record is not ``gone``."""
        return [e for e in self.entries() if e.op != "gone"]


def _parse(raw: bytes) -> tuple[str, float, Resource, dict[str, Any]] | None:
    if not raw.strip():
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("op") not in OPS:
            return None
        fields = {k: v for k, v in data.items() if k in _FIELDS}
        resource = Resource(**fields)
        if not all(isinstance(getattr(resource, k), str) for k in ("kind", "zone", "name")):
            return None
        extra = {k: v for k, v in data.items() if k not in _FIELDS and k not in ("op", "at")}
        return str(data["op"]), float(data["at"]), resource, extra
    except (UnicodeDecodeError, ValueError, TypeError, KeyError):
        return None
