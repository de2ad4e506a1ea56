"""The two facts of a kept node, each said by one function everywhere (issue 52, item 3): how it
ends without you (its idle limit and its latest deadline, in one sentence) and the one command
that ends it now (``down``; ``teardown NAME`` stays as its alias, never said beside it)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from tpuwizard.core.deadlines import EndedBy
from tpuwizard.words import bill_words

if TYPE_CHECKING:
    from tpuwizard.session.kept.lines import KeptInfo


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M", time.localtime(epoch))


def down_command(name: str, practice: bool) -> str:
    """The command that deletes a kept node and verifies it gone."""
    return f"tpuwizard down{' --sandbox' if practice else ''} {name}"


def end_it_words(name: str, practice: bool) -> str:
    """The sentence that gives that command."""
    return f"End it with: {down_command(name, practice)}."


EndForm = Literal["sentence", "clause", "bar"]


def kept_end_sentence(
    idle_minutes: float | None,
    deadline: float | None,
    ended_by: EndedBy | None,
    practice: bool,
    form: EndForm = "sentence",
) -> str:
    """How a kept node ends without you, as one sentence: "It deletes itself after 30 minutes
    without a run, at the latest at 09:27." (``deadline``: its --max-run deadline, or Google's
    own where ``ended_by`` says Google enforces it). The same facts as a ``clause`` (the quit
    guard's "..., or until it deletes itself ...") or in the wizard's one-line ``bar`` ("ends
    after 30m idle, by 09:27", short enough to leave the node's name on it). Each says the
    limits, never a countdown: while the wizard is open its heartbeats hold the idle limit off,
    so a time for it would be a time that does not come."""
    at = _clock(deadline) if deadline is not None else None
    by_google = ended_by == EndedBy.GOOGLE and at is not None
    if ended_by == EndedBy.NOTHING or not (idle_minutes or at):  # no watchdog (--no-watchdog)
        if form == "bar":
            return "no watchdog: only a delete ends it"
        return _said(f"no watchdog guards it: {bill_words.bills_until_deleted(practice)}", form)
    if form == "bar":
        return _bar(idle_minutes, at, by_google)
    if idle_minutes:
        idle = f"it deletes itself after {idle_minutes:g} minutes without a run"
        if by_google:
            return _said(f"{idle}; Google deletes it at about {at} at the latest", form)
        return _said(f"{idle}, at the latest at {at}" if at else idle, form)
    if by_google:
        return _said(f"Google deletes it at about {at}", form)
    return _said(f"it deletes itself at {at} (its deadline)", form)


def _bar(idle_minutes: float | None, at: str | None, by_google: bool) -> str:
    if idle_minutes:
        idle = f"ends after {idle_minutes:g}m idle"
        if by_google:
            return f"{idle}, by Google at {at}"
        return f"{idle}, by {at}" if at else idle
    if by_google:
        return f"Google deletes it at {at}"
    return f"ends at {at} (its deadline)"


def _said(clause: str, form: EndForm) -> str:
    """A clause as it is, or as a sentence."""
    return f"{clause[0].upper()}{clause[1:]}." if form == "sentence" else clause


def kept_info_line(info: KeptInfo) -> str:
    """The one line every command, ``status`` and plain mode show for a kept node: where it is,
    what it has cost, how it ends without you, and the command that ends it now."""
    if info.cost_usd is not None:
        spent = f"${info.cost_usd:.2f} so far"
    elif info.cost_at_most_usd is not None:
        spent = f"at most ${info.cost_at_most_usd:.2f} so far (no published price)"
    else:
        spent = "cost unknown (no price for it in the catalog)"
    if info.practice:  # practice bills nothing: the figure is what Google would charge
        spent = f"not billed ({spent} if it were real)"
    label = "[practice] " if info.practice else ""
    head = f"{label}Kept: {info.name} ({info.accelerator}) in {info.zone}, {spent}."
    idle = info.idle_deadline
    end = idle if idle is not None else info.max_deadline
    if end is not None and end <= time.time():
        # Its watchdog should have deleted it, unless it died with the VM: Google preempting
        # a spot node takes the watchdog too, and the queued resource stays ACTIVE.
        return (
            f"{head} Past its deadline, so gone unless Google preempted it (with its "
            f"watchdog): `{down_command(info.name, info.practice)}` deletes it if it is there."
        )
    idle_minutes = info.idle_s / 60 if info.idle_s else None
    by = None if idle_minutes or info.max_deadline else EndedBy.NOTHING
    sentence = kept_end_sentence(idle_minutes, info.max_deadline, by, info.practice)
    return f"{head} {sentence} {end_it_words(info.name, info.practice)}"
