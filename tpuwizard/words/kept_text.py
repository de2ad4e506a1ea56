"""What the wizard says of a node kept on purpose that still bills while it ends a run or exits:
its price, when it ends without us, and the command that ends it now (from the core's billing
state alone). In practice nothing bills: each sentence says it runs, and is not billed."""

from __future__ import annotations

import time

from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.records.billing_state import Billed, BillingState
from tpuwizard.core.plan import cost
from tpuwizard.words import bill_words
from tpuwizard.words.figures import about
from tpuwizard.words.kept_end import EndForm, end_it_words, kept_end_sentence


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M", time.localtime(epoch))


def kept_line(item: Billed, practice: bool) -> str:
    """One kept node: it stays kept, what it costs an hour, its deadline, how to end it."""
    hourly = about(
        cost.hourly(item.slice, item.route, item.zone),
        cost.at_most_hourly(item.slice, item.route, item.zone),
    )
    bills = (
        f"it runs ({bill_words.NOT_BILLED}; on Google {hourly}/h, estimate)"
        if practice
        else f"it bills {hourly}/h (estimate)"
    )
    return (
        f"{item.name} ({item.accelerator}) in {item.zone} stays kept, as you chose: {bills}. "
        f"{billed_end_sentence(item, practice)} {end_it_words(item.name, practice)}"
    )


def billed_end_sentence(item: Billed, practice: bool, form: EndForm = "sentence") -> str:
    """A kept node's end sentence (words/kept_end.py) from what the billing state holds: the
    same sentence the status bar, the quit guard, the Summary and the parting words say."""
    idle = item.idle_s / 60 if item.idle_s else None
    by = EndedBy.GOOGLE if item.deadline_by_google else None
    if item.kept_since is not None and idle is None and item.max_deadline is None:
        by = EndedBy.NOTHING
    return kept_end_sentence(idle, item.max_deadline, by, practice, form)


def kept_end_row(item: Billed, practice: bool) -> str:
    """The quit guard's line under a kept node's row: how it ends once the wizard is gone."""
    return f"  {item.name}: {billed_end_sentence(item, practice)}"


def kept_elsewhere(billing: BillingState, but: str | None = None) -> list[Billed]:
    """The nodes kept on purpose that this session knows still exist, less the one called
    ``but`` (the run's own, said by its summary)."""
    return [b for b in billing.existing() if (b.kept or b.kept_since) and b.name != but]


def guard_until_words(
    undecided: list[Billed],
    launching: str | None,
    watchdog_deadline: float | None,
    run_minutes: float | None,
    practice: bool = False,
) -> str:
    """What ends what the quit guard would keep, as far as this session knows: the launch's
    watchdog once armed; Google, for a Flex-start node (its run duration, ``run_minutes``) or a
    Compute Engine deadline; a node kept earlier, its own deadline; else only a delete."""
    ours = launching and all(b.name.startswith(launching) for b in undecided)
    one, many = "it bills until you delete it", "they bill until you delete them"
    if practice:
        one, many = "it runs until you delete it", "they run until you delete them"
    if ours and watchdog_deadline is not None:
        return _practice_note(
            f"{one}, or until its watchdog deletes it at "
            f"{_clock(watchdog_deadline)}, even if this laptop sleeps",
            practice,
        )
    ends = [(b.name, _guard_end(b, launching, run_minutes, practice)) for b in undecided]
    if len(ends) == 1:
        end = ends[0][1]
        if end.startswith("no watchdog"):
            return end
        return _practice_note(one + (f", or until {end}" if end else ""), practice)
    known = [f"{name}: {end}" for name, end in ends if end]
    return _practice_note(many + (f" ({'; '.join(known)})" if known else ""), practice)


def _practice_note(words: str, practice: bool) -> str:
    return f"{words} ({bill_words.NOT_BILLED})" if practice else words


def _guard_end(
    item: Billed, launching: str | None, run_minutes: float | None, practice: bool = False
) -> str:
    if item.kept_since is not None or item.max_deadline is not None or item.idle_s:
        # a node kept earlier: its end sentence's facts, said once, never a countdown
        return billed_end_sentence(item, practice, "clause")
    if item.route == "flex":
        # Flex-start's maximum run duration: Google deletes the node when it ends.
        minutes = run_minutes if launching and item.name.startswith(launching) else None
        run = f" ({minutes:g} min)" if minutes else ""
        return f"Google deletes it when its Flex-start run duration{run} ends"
    return ""


def guard_gone_words(items: list[Billed]) -> str:
    """The quit guard once nothing it named is in the billing state any more: their zones' last
    listing lacks them, so no row, no figure and no keeping is left to say."""
    names = ", ".join(b.name for b in items)
    if len(items) == 1:
        gone = "no longer exists[/b]: the last listing of its zone lacks it"
    else:
        gone = "no longer exist[/b]: the last listings of their zones lack them"
    return (
        f"[b]{names} {gone} (deleted meanwhile: elsewhere, by a watchdog or by Google).\n\n"
        "Quit, or stay."
    )
