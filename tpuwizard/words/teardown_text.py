"""What a delete-and-verify came to, in words: ``teardown``'s lines, and the resources other
commands deleted because Google had ended them (a preempted kept node, a stopped VM)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.words import bill_words
from tpuwizard.words.event_text import diagnosis_text
from tpuwizard.words.held_record_text import held_record_words
from tpuwizard.words.oslogin_text import login_key_words

if TYPE_CHECKING:
    from tpuwizard.core.launch.kept.end_reason import EndReason, GoneEvidence
    from tpuwizard.core.launch.teardown.verified import TeardownResult
    from tpuwizard.session.kept.nodes import KeptGone


def teardown_lines(result: TeardownResult, owner: str, practice: bool = False) -> list[str]:
    """What one delete-and-verify came to. A name another instance holds now was left alone:
    that is said as such, never as "verified gone" (``owner``: this install's owner label;
    ``practice``: the session's, so nothing is said to bill)."""
    r = result.resource
    if result.held_by is not None:
        if result.holder_owner == owner:  # this install's, from another run (another machine)
            who = f"is another of your runs now ({result.held_by}); left alone; the recorded one"
        else:
            who = f"is someone else's now ({result.held_by}); left alone; yours"
        return [f"  {r.name} in {r.zone} {who} is gone", *_held(result)]
    if result.verified:
        key = [f"  {login_key_words(result.login_key)}"] if result.login_key else []
        return [f"  verified gone: {r.name}", *key, *_held(result)]
    lines = [f"  NOT verified gone: {r.name}; {bill_words.may_still_bill(practice)}."]
    return lines + ([diagnosis_text(result.diagnosis)] if result.diagnosis else [])


def _held(result: TeardownResult) -> list[str]:
    """Its gone record, refused by this computer's disk: where it is held (the verdict above is
    the cloud's list's)."""
    if result.held is None:
        return []
    from tpuwizard.core.launch.events.launch_events import LedgerRecordHeld

    said = LedgerRecordHeld(result.resource.name, "gone", *result.held.facts())
    return [f"  {held_record_words(said)}"]


def preempted_lines(result: TeardownResult, practice: bool) -> list[str]:
    """A kept node Google preempted (its watchdog died with its VM), deleted by this command."""
    r = result.resource
    name = r.node_id or r.name
    what = f"it and its queued resource {r.name}" if r.kind == "queued" else "it"
    head = f"{name} was preempted by Google, and its watchdog went with its VM"
    if result.verified:
        return [f"{head}: deleted {what}: verified gone."]
    down = f"tpuwizard down{' --sandbox' if practice else ''} {name}"
    are = f"{what} are" if r.kind == "queued" else "it is"
    may = bill_words.may_still_bill(practice).removeprefix("it ")
    lines = [f"{head}; {are} NOT verified gone and {may}: `{down}` tries again."]
    return lines + ([diagnosis_text(result.diagnosis)] if result.diagnosis else [])


def kept_gone_line(gone: KeptGone) -> str:
    """A kept node that no tpuwizard command here deleted is gone: the reason its times support
    (:func:`~tpuwizard.core.launch.kept.end_reason.end_reason`), never a limit whose time had
    not come."""
    info = gone.info
    head = f"{info.name}, kept in {info.zone}, is gone, and no tpuwizard command here deleted it"
    return f"{head}: {end_reason_words(gone.reason, gone.evidence)}."


def end_reason_words(reason: EndReason, evidence: GoneEvidence) -> str:
    """Who ended a kept node, as its evidence says: the limit that passed, a preemption the
    listing showed, else outside tpuwizard."""
    from tpuwizard.core.launch.kept.end_reason import EndReason

    match reason:
        case EndReason.IDLE:
            minutes = (evidence.idle_s or 0.0) / 60
            return f"its watchdog, after {minutes:g} minutes without a run"
        case EndReason.MAX_RUN:
            at = _clock(evidence.max_deadline or evidence.seen_gone_at)
            return f"its --max-run deadline at {at} passed (its watchdog, or Google at that time)"
        case EndReason.PREEMPTED:
            return "Google preempted it (its zone's listing showed it PREEMPTED)"
        case EndReason.DELETED:
            return "tpuwizard deleted it and verified it gone"
    return "deleted outside tpuwizard (or by Google)"


def _clock(epoch: float) -> str:
    import time

    return time.strftime("%H:%M", time.localtime(epoch))


def stopped_lines(result: TeardownResult, practice: bool) -> list[str]:
    """A Compute Engine VM of ours that Google stopped (no deadline any more, its disk billing),
    deleted by this command."""
    name = result.resource.name
    disk = f"its disk not billed: {bill_words.NOT_BILLED}" if practice else "its disk still billing"
    head = f"{name} was stopped by Google (no deadline any more, {disk})"
    if result.verified:
        return [f"{head}: deleted: verified gone."]
    down = f"tpuwizard teardown{' --sandbox' if practice else ''} {name}"
    may = bill_words.may_still_bill(practice).removeprefix("it ")
    lines = [f"{head}; it is NOT verified gone and {may}: `{down}` tries again."]
    return lines + ([diagnosis_text(result.diagnosis)] if result.diagnosis else [])
