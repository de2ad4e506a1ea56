"""A kept node's record in the ledger, read once into typed fields: what ``up`` wrote when it kept
the node (``Ending.keep``: its deadline and who ends it then, the watchdog's idle time, when it was
kept, the settings a replacement is made from), and on a replaced node's "gone" record, the node
``run --checkpoints`` made in its place. The field names are the ledger's on disk: older ledgers
are read with them, and a record from before a field was written reads as its absence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.records.ledger import Entry

SETTINGS_FIELD = "settings"
REPLACED_BY_FIELD = "replaced_by"
RUN_DIR_FIELD = "run_dir"


def _ended_by(value: Any) -> EndedBy | None:
    """The word as written, read as an EndedBy; None where a record holds none (or a word this
    version does not know)."""
    try:
        return EndedBy(value) if value else None
    except ValueError:
        return None


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and value else None


@dataclass(frozen=True)
class KeptRecord:
    """What the ledger holds of one kept node (or of one that was replaced)."""

    kept_at: float  # when it was kept (the record's own time where an older one lacks it)
    deadline: float | None  # when it ends without tpuwizard: its watchdog, or Google's limit
    ended_by: EndedBy | None  # who ends it without tpuwizard, as written
    idle_s: float | None  # the watchdog's idle time: the heartbeats keep it alive
    settings: dict[str, Any] = field(default_factory=dict)  # what up asked for (settings.py)
    replaced_by: str | None = None  # the node run --checkpoints made in its place
    run_dir: str | None = None  # the folder of the run that kept it (absolute), if recorded

    @classmethod
    def of(cls, entry: Entry) -> KeptRecord:
        extra = entry.extra
        replaced = extra.get(REPLACED_BY_FIELD)
        return cls(
            kept_at=float(extra.get("kept_at") or entry.at),
            deadline=_seconds(extra.get("deadline")),
            ended_by=_ended_by(extra.get("ended_by")),
            idle_s=_seconds(extra.get("idle_s")),
            settings=dict(extra.get(SETTINGS_FIELD) or {}),
            replaced_by=str(replaced) if replaced else None,
            run_dir=str(folder) if isinstance(folder := extra.get(RUN_DIR_FIELD), str) else None,
        )

    @property
    def ended_by_google(self) -> bool:
        return self.ended_by == EndedBy.GOOGLE

    def fields(self) -> dict[str, Any]:
        """The record's fields as the ledger writes them."""
        written: dict[str, Any] = {
            "deadline": self.deadline,
            "ended_by": self.ended_by,
            "idle_s": self.idle_s,
            "kept_at": self.kept_at,
            SETTINGS_FIELD: self.settings,
        }
        if self.replaced_by is not None:
            written[REPLACED_BY_FIELD] = self.replaced_by
        if self.run_dir is not None:
            written[RUN_DIR_FIELD] = self.run_dir
        return written
