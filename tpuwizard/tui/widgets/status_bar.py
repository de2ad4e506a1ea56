"""The bar at the top of every screen: practice banner, step, and the billing meter."""

from __future__ import annotations

from textual.widgets import Static

from tpuwizard.event_text import money


class StatusBar(Static):
    """Re-reads the App's state once a second, so the meter runs from create to teardown."""

    def __init__(self, step: str) -> None:
        super().__init__(id="status-bar")
        self.step = step

    def on_mount(self) -> None:
        self.refresh_text()
        self.set_interval(1.0, self.refresh_text)

    def refresh_text(self) -> None:
        state = self.app.state  # type: ignore[attr-defined]
        practice = "PRACTICE | " if state.practice else ""
        if state.billing is not None:
            b = state.billing
            meter = f"BILLING {b.name} {b.zone} {int(b.age_s())}s ~{money(b.cost_usd())} est."
        else:
            meter = "Nothing is billing"
        self.update(f"{practice}{self.step} | {meter}")
        self.set_class(state.billing is not None, "billing")
