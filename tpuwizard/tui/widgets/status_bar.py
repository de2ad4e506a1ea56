"""The bar at the top of every screen: practice banner, step, and the billing meter."""

from __future__ import annotations

from textual.widgets import Static

from tpuwizard.core.launch.billing import BillingState
from tpuwizard.event_text import count, money


def meter_text(billing: BillingState, names: bool = True) -> str:
    """What may bill now, in a few words: read from the core's billing state, never guessed.

    Without ``names`` (a narrow terminal) the money and time stay and the names go: the screen
    below names the resource anyway.
    """
    existing = billing.existing()
    if not existing:
        return "Nothing is billing"
    costing = billing.costing()
    if not costing:
        what = ", ".join(b.name for b in existing) if names else count(len(existing), "resource")
        return f"EXISTS {what} (not billing yet)"
    first = costing[0]
    more = f" +{len(costing) - 1}" if len(costing) > 1 else ""
    name = f" {first.name}{more}" if names else (f" x{len(costing)}" if more else "")
    return f"BILLING{name} {int(first.costing_s())}s ~{money(billing.cost_usd())} est."


class StatusBar(Static):
    """Re-reads the App's billing state once a second, so the meter runs until verified gone."""

    def __init__(self, step: str) -> None:
        super().__init__(id="status-bar")
        self.step = step

    def on_mount(self) -> None:
        self.refresh_text()
        self.set_interval(1.0, self.refresh_text)

    def on_resize(self) -> None:
        self.refresh_text()

    def refresh_text(self) -> None:
        app = self.app
        practice = "PRACTICE | " if app.state.practice else ""  # type: ignore[attr-defined]
        billing: BillingState = app.billing  # type: ignore[attr-defined]
        text = f"{practice}{self.step} | {meter_text(billing)}"
        if len(text) > self.size.width - 2:  # the meter must never fall off the bar
            text = f"{practice}{self.step} | {meter_text(billing, names=False)}"
        self.update(text)
        self.set_class(billing.may_bill(), "billing")
