"""The bar at the top of every screen: practice banner, step, and the billing meter."""

from __future__ import annotations

from textual.widgets import Static

from tpuwizard.core.launch.billing import BillingState
from tpuwizard.event_text import money


def meter_text(billing: BillingState) -> str:
    """What may bill now, in a few words: read from the core's billing state, never guessed."""
    existing = billing.existing()
    if not existing:
        return "Nothing is billing"
    costing = billing.costing()
    if not costing:
        names = ", ".join(b.name for b in existing)
        return f"EXISTS {names} (not billing yet)"
    first = costing[0]
    more = f" +{len(costing) - 1}" if len(costing) > 1 else ""
    return f"BILLING {first.name}{more} {int(first.costing_s())}s ~{money(billing.cost_usd())} est."


class StatusBar(Static):
    """Re-reads the App's billing state once a second, so the meter runs until verified gone."""

    def __init__(self, step: str) -> None:
        super().__init__(id="status-bar")
        self.step = step

    def on_mount(self) -> None:
        self.refresh_text()
        self.set_interval(1.0, self.refresh_text)

    def refresh_text(self) -> None:
        app = self.app
        practice = "PRACTICE | " if app.state.practice else ""  # type: ignore[attr-defined]
        billing: BillingState = app.billing  # type: ignore[attr-defined]
        self.update(f"{practice}{self.step} | {meter_text(billing)}")
        self.set_class(billing.may_bill(), "billing")
