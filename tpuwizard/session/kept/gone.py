"""A kept node seen gone, by whoever sees it first (``status``, a wizard heartbeat, the next
``run``): the evidence of its times, the reason that evidence supports, and its run folder
closed with both (:func:`~tpuwizard.session.run_outcome.close_kept_run`), so the folder never says
"still running" of a node its zone's listing no longer has."""

from __future__ import annotations

import time
from pathlib import Path

from tpuwizard.core.launch.kept.end_reason import (
    EndReason,
    GoneEvidence,
    end_reason,
    limit_passed_at,
)
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.records.ledger import Entry
from tpuwizard.session.kept.lines import node_id
from tpuwizard.session.run_outcome import close_kept_run


def gone_evidence(
    entry: Entry,
    beats: dict[str, float],
    seen_gone_at: float | None = None,
    preempted: bool = False,
) -> GoneEvidence:
    """What the ledger and the heartbeat book hold of a kept node seen gone now (or at
    ``seen_gone_at``)."""
    record = KeptRecord.of(entry)
    return GoneEvidence(
        kept_at=record.kept_at,
        idle_s=record.idle_s,
        max_deadline=record.deadline,
        last_heartbeat=beats.get(node_id(entry.resource)),
        seen_gone_at=time.time() if seen_gone_at is None else seen_gone_at,
        preempted=preempted,
    )


def close_gone_run(entry: Entry, evidence: GoneEvidence, seen_by: str) -> EndReason:
    """Close the run folder of the launch that kept ``entry``'s node, seen gone by ``seen_by``
    (a command's name, or "heartbeat"), with the reason its evidence supports; returns it."""
    reason = end_reason(evidence)
    folder = KeptRecord.of(entry).run_dir
    if folder:
        close_kept_run(
            Path(folder),
            entry.resource.name,
            evidence.seen_gone_at,
            reason=reason,
            seen_by=seen_by,
            last_seen_at=evidence.last_seen_present_at,
            limit_at=limit_passed_at(evidence, reason),
        )
    return reason
