"""The wizard's last words, printed to the terminal after it exits."""

from __future__ import annotations

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.plan import cost
from tpuwizard.words.bill_words import still_running
from tpuwizard.words.event_text import kept_guard_words
from tpuwizard.words.figures import about
from tpuwizard.words.kept_text import kept_elsewhere, kept_line
from tpuwizard.words.summary_text import summary_lines


def farewell(
    billing: BillingState, kept: ev.Kept | None, practice: bool, summary: RunSummary | None
) -> str:
    """The run's summary (when a launch ended the session), then what still runs and bills and
    the command that deletes each; a node kept earlier stays kept, and is said so."""
    before = kept_elsewhere(billing, kept.name if kept is not None else None)
    stays = [kept_line(b, practice) for b in before]
    lines = summary_lines(summary, "wizard", stays) if summary is not None else stays
    existing = billing.existing()
    if not existing:
        return "\n".join([*lines, "Nothing tpuwizard created is billing."])
    for b in existing:
        if b in before:
            continue  # said above
        hourly = about(
            cost.hourly(b.slice, b.route, b.zone),
            cost.at_most_hourly(b.slice, b.route, b.zone),
        )
        bills = (
            f"is {still_running(True)}; on Google {hourly}/h (estimate)"
            if practice
            else f"is still running and billing {hourly}/h (estimate)"
        )
        if kept is not None and kept.name == b.name:  # its end and `down`, as its Kept line
            lines.append(f"{b.name} in {b.zone} {bills}.{kept_guard_words(kept)}")
            continue
        command = f"tpuwizard teardown {b.name}" + (" --sandbox" if practice else "")
        lines.append(f"{b.name} in {b.zone} {bills}. Delete it with: {command}.")
    return "\n".join(lines)
