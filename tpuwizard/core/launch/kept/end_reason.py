"""Why a kept node that no tpuwizard command deleted is gone, from the times the evidence holds:
the limit that passed first before it was seen gone (its idle limit, or its ``--max-run``
deadline), a preemption the listing showed, else something outside tpuwizard. A limit whose time
had not come when the node was seen gone is never the reason."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EndReason(StrEnum):
    """What ended a kept node (the run folder's ``outcome.json`` holds the word)."""

    IDLE = "idle"  # its watchdog, after its idle time without a run or a heartbeat
    MAX_RUN = "max_run"  # its --max-run deadline (its watchdog's, or Google's own)
    PREEMPTED = "preempted"  # the listing showed it PREEMPTED
    OUTSIDE = "outside"  # none of those: deleted outside tpuwizard (or by Google)
    DELETED = "deleted"  # a tpuwizard command deleted it and verified it gone


@dataclass(frozen=True)
class GoneEvidence:
    """What is known of a kept node seen gone, all times in epoch seconds."""

    kept_at: float
    idle_s: float | None  # the watchdog's idle time (None: no idle limit armed)
    max_deadline: float | None  # its --max-run deadline (None: none)
    last_heartbeat: float | None  # the last heartbeat this computer sent it
    seen_gone_at: float  # the first time it was seen gone
    preempted: bool = False  # the listing showed it PREEMPTED

    @property
    def last_seen_present_at(self) -> float:
        """The last time it is known to have existed: its last heartbeat reached it, or it was
        kept then."""
        return max(self.kept_at, self.last_heartbeat or 0.0)

    @property
    def idle_limit_at(self) -> float | None:
        """When its idle limit passed (or passes) without another heartbeat."""
        if self.idle_s is None:
            return None
        return self.last_seen_present_at + self.idle_s


def end_reason(evidence: GoneEvidence) -> EndReason:
    """The reason the evidence supports: a preemption seen; else the first limit whose time had
    come when it was seen gone; else outside tpuwizard."""
    if evidence.preempted:
        return EndReason.PREEMPTED
    passed = [
        (at, reason)
        for at, reason in (
            (evidence.idle_limit_at, EndReason.IDLE),
            (evidence.max_deadline, EndReason.MAX_RUN),
        )
        if at is not None and at <= evidence.seen_gone_at
    ]
    return min(passed)[1] if passed else EndReason.OUTSIDE


def limit_passed_at(evidence: GoneEvidence, reason: EndReason) -> float | None:
    """When the limit ``reason`` names passed (its idle limit, or its --max-run deadline); None
    for a reason that is no limit of ours (a preemption, outside tpuwizard, a delete)."""
    match reason:
        case EndReason.IDLE:
            return evidence.idle_limit_at
        case EndReason.MAX_RUN:
            return evidence.max_deadline
    return None
