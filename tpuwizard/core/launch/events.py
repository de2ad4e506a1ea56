"""The events one launch produces. The TUI, plain mode and ``launch --json`` all consume these.

Each is a small dataclass; ``to_dict()`` gives ``{"event": "provisioning", ...}`` for JSON lines.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    @classmethod
    def event_name(cls) -> str:
        """``ReceiptSaved`` -> ``receipt_saved``: the ``"event"`` key of the JSON line."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event_name(), **asdict(self)}


@dataclass(frozen=True)
class Planned(Event):
    run_id: str
    name: str
    accelerator: str
    zone: str
    route: str
    project: str
    chips: int
    workers: int
    price_per_hour_usd: float | None
    max_run_minutes: float | None
    practice: bool
    run_dir: str


@dataclass(frozen=True)
class Provisioning(Event):
    state: str
    elapsed_s: float
    cost_usd: float | None


@dataclass(frozen=True)
class ZoneFailover(Event):
    from_zone: str
    to_zone: str
    reason: str


@dataclass(frozen=True)
class Ready(Event):
    workers: int
    endpoints: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SshReady(Event):
    workers: int


@dataclass(frozen=True)
class BootstrapLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class Versions(Event):
    worker: int
    versions: dict[str, Any]
    workers: int = 1


@dataclass(frozen=True)
class Watchdog(Event):
    armed: bool
    deadline: float  # seconds since the epoch
    detail: str


@dataclass(frozen=True)
class VerifierLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class Check(Event):
    worker: int
    name: str
    ok: bool
    detail: str
    boundary: str


@dataclass(frozen=True)
class ReceiptSaved(Event):
    path: str
    ok: bool
    receipt_sha256: str


@dataclass(frozen=True)
class ScriptLine(Event):
    worker: int
    text: str
    workers: int = 1  # lines are prefixed [wN] when the slice has more than one VM


@dataclass(frozen=True)
class FileFetched(Event):
    path: str


@dataclass(frozen=True)
class TeardownStarted(Event):
    name: str
    kind: str


@dataclass(frozen=True)
class TeardownVerified(Event):
    name: str
    kind: str
    billed_s: float
    cost_usd: float | None


@dataclass(frozen=True)
class TeardownFailed(Event):
    name: str
    kind: str
    diagnosis: dict[str, Any]


@dataclass(frozen=True)
class Kept(Event):
    name: str
    zone: str
    delete_command: str


@dataclass(frozen=True)
class Failed(Event):
    stage: str
    diagnosis: dict[str, Any]


@dataclass(frozen=True)
class Finished(Event):
    ok: bool
    exit_code: int
    run_dir: str
    cost_usd: float | None
