"""The write-ahead ledger: a record of everything tpuwizard creates, written before it exists.

JSON lines, appended under an exclusive file lock and fsynced before the call they announce:

* ``intent`` before every create call (so a crash mid-call still leaves a trace);
* ``created`` once the API accepted it;
* ``gone`` only after a teardown was *verified* (get says NotFound and the list lacks it).

Folding the records gives, per resource, its last word; anything whose last word is not ``gone``
may still exist and may still bill.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

OPS = ("intent", "created", "gone")


@dataclass(frozen=True)
class Resource:
    """One thing tpuwizard created: a node or a queued resource."""

    kind: str  # "node" or "queued"
    project: str
    zone: str
    name: str
    accelerator: str
    run_id: str
    route: str = "vm"  # vm, spot, flex
    node_id: str | None = None  # for a queued resource: the node it asks for

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.kind, self.project, self.zone, self.name)


@dataclass(frozen=True)
class Entry:
    resource: Resource
    op: str
    at: float
    first_at: float  # when the intent was recorded: the start of billing risk
    extra: dict[str, Any] = field(default_factory=dict)


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, op: str, resource: Resource, **extra: Any) -> None:
        if op not in OPS:
            raise ValueError(f"unknown ledger op {op!r}")
        line = (
            json.dumps({"op": op, "at": time.time(), **asdict(resource), **extra}, sort_keys=True)
            + "\n"
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def entries(self) -> list[Entry]:
        """Every resource's latest record, in the order they were first recorded."""
        if not self.path.exists():
            return []
        folded: dict[tuple[str, str, str, str], Entry] = {}
        with open(self.path) as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH)
            lines = f.readlines()
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        names = {f.name for f in Resource.__dataclass_fields__.values()}  # type: ignore[attr-defined]
        for line in lines:
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line from a crash mid-write: the intent before it stands
            resource = Resource(**{k: v for k, v in data.items() if k in names})
            extra = {k: v for k, v in data.items() if k not in names and k not in ("op", "at")}
            previous = folded.get(resource.key)
            first = previous.first_at if previous else data["at"]
            merged = {**(previous.extra if previous else {}), **extra}
            folded[resource.key] = Entry(resource, data["op"], data["at"], first, merged)
        return list(folded.values())

    def open_entries(self) -> list[Entry]:
        """What may still exist: every resource whose last record is not ``gone``."""
        return [e for e in self.entries() if e.op != "gone"]
