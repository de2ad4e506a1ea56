"""A ledger record this computer's disk refused, said as an event of the launch's vocabulary
(re-exported by :mod:`.launch_events`)."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.launch.events.base import Event


@dataclass(frozen=True)
class LedgerRecordHeld(Event):
    """This computer's disk refused a ledger record (full, read-only): what it said of which
    resource (``op``: created, kept, gone...), why, and where it is held until the disk takes
    it (``kept_in``; None: only in this command's memory). What is said of the resource itself
    comes from the cloud's list, never from whether its record was written."""

    name: str
    op: str
    reason: str
    ledger: str
    kept_in: str | None = None
