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

A disk that refuses a record (full, read-only) never stops a delete, the list that verifies it,
or the words about a node: the record is held (:mod:`.ledger_file`) and read with the others
until the disk takes it, and :meth:`Ledger.record` says where it is. An ``intent`` is never
held: :class:`~tpuwizard.core.errors.LedgerUnwritable` is raised, and nothing is created.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpuwizard.core import untrusted
from tpuwizard.core.errors import LedgerUnwritable
from tpuwizard.core.launch.records.ledger_file import Appender, Held, LedgerFile, append_lines

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice

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
    # Which API made it (core/cloud/backends.py); records from before Compute Engine are tpu-api.
    backend: str = "tpu-api"
    # How Compute Engine was asked for it (backends.VIAS): "resize-request" is a MIG, its
    # template and its resize request, named as the MIG, whatever the accelerator.
    via: str = "auto"

    @property
    def slice(self) -> Slice:
        """The recorded accelerator type, parsed: the ledger is where the name is read back from
        disk (an edge, as the command line is)."""
        from tpuwizard.core.plan import catalog

        return catalog.parse_accelerator(self.accelerator)

    @property
    def known_slice(self) -> Slice | None:
        """:attr:`slice`, or None for a name the catalog does not know (a diagnosis words it
        all the same)."""
        from tpuwizard.core.plan import catalog

        try:
            return self.slice
        except catalog.UnknownAcceleratorError:
            return None

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """One instance: the same name from another run is another resource."""
        return (self.kind, self.project, self.zone, self.name, self.run_id)


@dataclass(frozen=True)
class Entry:
    """One resource instance's latest record, folded from its lines in the ledger."""

    resource: Resource
    op: str
    at: float
    first_at: float  # when the intent was recorded: the start of billing risk
    extra: dict[str, Any] = field(default_factory=dict)


_FIELDS = {f for f in Resource.__dataclass_fields__}


class Ledger:
    def __init__(
        self, path: Path, fallback_base: Path | None = None, append: Appender = append_lines
    ) -> None:
        """``fallback_base``: where refused records are held (the system's temporary folder);
        ``append``: how a line reaches the file (a test makes the disk refuse through it)."""
        self.path = path
        # A folder that cannot be made (a read-only home that never held this ledger: `status`
        # and `down` work from one) reads as no ledger; a record is then held, an intent
        # refused (LedgerUnwritable), each by the append that meets the disk's refusal.
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = LedgerFile(path, fallback_base, append)
        self.unreadable: list[tuple[int, str]] = []  # (line number, why) from the last read

    def record(self, op: str, resource: Resource, **extra: Any) -> Held | None:
        """Append one record and fsync it before returning; None once it is in the ledger.

        A disk that refuses it: the record is held, read with the others and written once the
        disk allows, and the answer says why and where it is (the caller says so). An
        ``intent`` is not held: :class:`LedgerUnwritable` is raised, and the create it would
        announce must not happen."""
        if op not in OPS:
            raise ValueError(f"unknown ledger op {op!r}")
        data = {"op": op, "at": time.time(), **asdict(resource), **extra}
        line = json.dumps(data, sort_keys=True).encode() + b"\n"
        try:
            return self.file.append(line, hold=op != "intent")
        except OSError as err:  # only an intent's: nothing was held, nothing may be created
            raise LedgerUnwritable(self.path, err) from err

    @property
    def side_file(self) -> Path:
        """Where unreadable lines are kept, with their line numbers, for a person to look at."""
        return self.path.with_name(self.path.name + ".unreadable")

    def entries(self) -> list[Entry]:
        """Every resource instance's latest record, in the order they were first recorded.

        Lines that cannot be read (torn by a crash, edited by hand, naming a resource no API
        call could address) are skipped, listed in :attr:`unreadable` as (line number, why),
        and copied to :attr:`side_file`; one bad line never hides the others.
        """
        self.unreadable = []
        lines = self.file.read().split(b"\n")  # with the records held while the disk refused
        folded: dict[tuple[str, ...], Entry] = {}
        bad: list[bytes] = []
        for number, raw in enumerate(lines, start=1):
            parsed = _parse(raw)
            if isinstance(parsed, str):
                self.unreadable.append((number, parsed))
                bad.append(f"line {number}: {parsed}: ".encode() + raw + b"\n")
                continue
            if parsed is None:
                continue
            op, at, resource, extra = parsed
            previous = folded.get(resource.key)
            first = previous.first_at if previous else at
            merged = {**(previous.extra if previous else {}), **extra}
            folded[resource.key] = Entry(resource, op, at, first, merged)
        if bad:
            self._keep_aside(b"".join(bad))
        return list(folded.values())

    def _keep_aside(self, text: bytes) -> None:
        """Rewrite the side file with the unreadable lines (atomically: a reader never sees a
        half-written one). A disk that refuses must not stop status or teardown."""
        tmp = self.side_file.with_name(f"{self.side_file.name}.{os.getpid()}.tmp")
        try:
            if self.side_file.exists() and _same(self.side_file, text):
                return
            tmp.write_bytes(text)
            os.replace(tmp, self.side_file)
        except OSError:
            tmp.unlink(missing_ok=True)

    def open_entries(self) -> list[Entry]:
        """What may still exist: every resource instance whose last record is not ``gone``."""
        return [e for e in self.entries() if e.op != "gone"]


def _same(path: Path, text: bytes) -> bool:
    try:
        return untrusted.read_small(path, len(text)) == text
    except (OSError, ValueError):
        return False  # larger, or no regular file: replaced


def _parse(raw: bytes) -> tuple[str, float, Resource, dict[str, Any]] | str | None:
    """One line: its record, None for a blank line, or why it cannot be used."""
    if not raw.strip():
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8"
    except ValueError:
        return "not JSON (torn by a crash, or edited)"
    except RecursionError:  # '[' * 100000: Python's parser gives up; the line is unreadable
        return _TOO_DEEP
    if not isinstance(data, dict):
        return "not a JSON object"
    # A record is flat; a deep value that did parse would still break a later repr or dumps.
    if _depth_over(data, _MAX_DEPTH):
        return _TOO_DEEP
    if data.get("op") not in OPS:
        return f"unknown op {data.get('op')!r}"
    try:
        fields = {k: v for k, v in data.items() if k in _FIELDS}
        resource = Resource(**fields)
        at = float(data["at"])
    except (TypeError, KeyError, ValueError):
        return "missing or malformed fields"
    why = _unaddressable(resource)
    if why:
        return why
    extra = {k: v for k, v in data.items() if k not in _FIELDS and k not in ("op", "at")}
    return str(data["op"]), at, resource, extra


_MAX_DEPTH = 16
_TOO_DEEP = "nested too deeply to be a record"


def _depth_over(value: object, limit: int) -> bool:
    """Whether lists and objects nest deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _unaddressable(r: Resource) -> str | None:
    """Why no API call could name this resource (a '/' in a name, an unknown zone...)."""
    from tpuwizard.core.cloud.names import is_project_id, is_resource_name, is_zone

    if r.kind not in ("node", "queued"):
        return f"unknown kind {r.kind!r}"
    for what, value, rule in (
        ("project", r.project, is_project_id),
        ("zone", r.zone, is_zone),
        ("name", r.name, is_resource_name),
    ):
        if not isinstance(value, str) or not rule(value):
            return f"invalid {what} {value!r}"
    if not isinstance(r.run_id, str) or not isinstance(r.accelerator, str):
        return "missing or malformed fields"
    return None
