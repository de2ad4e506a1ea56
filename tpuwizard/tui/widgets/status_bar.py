"""The bar at the top of every screen: practice banner, step, and the billing meter."""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget

from tpuwizard.core.launch.records.billing_state import Billed, BillingState
from tpuwizard.tui.host import host
from tpuwizard.words.bill_words import meter_estimate, meter_word
from tpuwizard.words.figures import count, short_estimate
from tpuwizard.words.kept_text import billed_end_sentence


def kept_text(item: Billed, names: bool = True, practice: bool = False) -> str:
    """A node kept for iterating: what it has cost (the bar says PRACTICE first where nothing
    is billed) and how it ends without you, in the end sentence's words (words/kept_end.py),
    never a countdown to an idle limit the wizard's own heartbeats keep moving."""
    name = f" {item.name}" if names else ""
    spent = short_estimate(item.cost_usd(), item.cost_at_most_usd())
    return f"KEPT{name} {spent}, {billed_end_sentence(item, practice, 'bar')}"


def meter_text(billing: BillingState, names: bool = True, practice: bool = False) -> str:
    """What may bill now, in a few words: read from the core's billing state, never guessed;
    in practice what runs, and what it would cost if it were real (nothing is billed).

    Without ``names`` (a narrow terminal) the money and time stay and the names go: the screen
    below names the resource anyway. Kept nodes (``tpuwizard up``) come first, with their idle
    end; then whatever else exists.
    """
    kept = billing.kept_nodes()
    rest = launch_meter(billing, {b.name for b in kept}, names, practice) if kept else None
    if kept:
        more = f" +{len(kept) - 1} kept" if len(kept) > 1 else ""
        return kept_text(kept[0], names, practice) + more + (f" | {rest}" if rest else "")
    if billing.leftovers == "checking" and not billing.existing():
        return "Looking for leftovers..."
    if billing.leftovers == "unknown" and not billing.existing():
        return "Leftovers unknown (check failed)"
    return launch_meter(billing, set(), names, practice) or "Nothing is billing"


def launch_meter(
    billing: BillingState, skip: set[str], names: bool, practice: bool = False
) -> str | None:
    """The meter for what is not a kept node (this launch, leftovers); None when nothing is."""
    existing = [b for b in billing.existing() if b.name not in skip]
    if not existing:
        return None
    costing = [b for b in billing.costing() if b.name not in skip]
    if not costing:
        what = ", ".join(b.name for b in existing) if names else count(len(existing), "resource")
        not_yet = "not running yet" if practice else "not billing yet"
        when = "no longer billing" if all(b.stopped_billing for b in existing) else not_yet
        return f"EXISTS {what} ({when})"
    first = costing[0]
    more = f" +{len(costing) - 1}" if len(costing) > 1 else ""
    name = f" {first.name}{more}" if names else (f" x{len(costing)}" if more else "")
    spent = billing.cost_usd(without=skip)
    if spent is not None:  # and what this launch's resources verified gone cost (earlier attempts)
        spent = round(spent + billing.gone_cost_usd, 2)
    bound = billing.cost_usd(without=skip, at_most=True) if spent is None else None
    figure = f"{short_estimate(spent, bound)} {meter_estimate(practice)}"
    return f"{meter_word(practice)}{name} {int(first.costing_s())}s {figure}"


class StatusBar(Widget):
    """Re-reads the App's billing state once a second, so the meter runs until verified gone.

    Drawn from the state on each refresh: one line that never changes size, so a new reading
    repaints the bar alone instead of laying out the screen again.
    """

    def __init__(self, step: str) -> None:
        super().__init__(id="status-bar")
        self.step = step

    def on_mount(self) -> None:
        self.set_class(host(self).billing.may_bill(), "billing")
        self.set_interval(1.0, self.refresh_text)

    def refresh_text(self) -> None:
        self.set_class(host(self).billing.may_bill(), "billing")
        self.refresh()
        stack = self.app.screen_stack
        if self.screen in stack:
            # Under two dialogs Textual shows this bar as last drawn: redraw it on each.
            for screen in stack[stack.index(self.screen) + 1 :]:
                screen.refresh(self.region)

    def render(self) -> Content:
        app = host(self)
        return Content(bar_text(app.billing, self.step, app.state.practice, self.size.width - 2))


def bar_text(billing: BillingState, step: str, practice: bool, width: int) -> str:
    """The bar's line within ``width`` where it can be: the step shortened to its number (a
    step without one, to nothing) first, then the names dropped, so that at 80 columns the
    running node keeps its name."""
    banner = "PRACTICE | " if practice else ""
    number = step.split(" ", 1)[0]
    heads = [f"{banner}{step} | ", f"{banner}{number} | " if number.isdigit() else banner]
    texts = [
        head + meter_text(billing, names, practice) for names in (True, False) for head in heads
    ]
    return next((text for text in texts if len(text) <= width), texts[-1])
