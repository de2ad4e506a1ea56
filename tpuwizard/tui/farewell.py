"""The wizard's last words, printed to the terminal after it exits."""

from __future__ import annotations

from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.billing import BillingState
from tpuwizard.core.launch.summary import RunSummary
from tpuwizard.core.plan import cost
from tpuwizard.event_text import kept_guard_words, summary_lines
from tpuwizard.figures import about
from tpuwizard.kept_text import kept_line


def farewell(
    billing: BillingState, kept: ev.Kept | None, practice: bool, summary: RunSummary | None
) -> str:
    """The run's summary (when a launch ended the session), then what still runs and bills and
    the command that deletes each."""
    lines = summary_lines(summary) if summary is not None else []
    existing = billing.existing()
    if not existing:
        return "\n".join([*lines, "Nothing tpuwizard created is billing."])
    for b in existing:
        if (b.kept or b.kept_since) and not (kept is not None and kept.name == b.name):
            lines.append(kept_line(b, practice))  # kept before: it stays kept, said so
            continue
        command = (
            kept.delete_command
            if kept is not None and kept.name == b.name
            else f"tpuwizard teardown {b.name}" + (" --sandbox" if practice else "")
        )
        hourly = about(
            cost.hourly(b.accelerator, b.route, b.zone),
            cost.at_most_hourly(b.accelerator, b.route, b.zone),
        )
        guard = kept_guard_words(kept) if kept is not None and kept.name == b.name else ""
        lines.append(
            f"{b.name} in {b.zone} is still running and billing {hourly}/h "
            f"(estimate). Delete it with: {command}.{guard}"
        )
    return "\n".join(lines)
