"""The quit guard: while something may bill, quitting means deciding what happens to it."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from tpuwizard.event_text import money
from tpuwizard.tui.state import Billing


class QuitGuard(ModalScreen[str | None]):
    """Dismissed with "delete", "keep" (the name was typed) or None (stay)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "stay", "Stay")]

    def __init__(self, billing: Billing) -> None:
        super().__init__()
        self.billing = billing

    def compose(self) -> ComposeResult:
        b = self.billing
        with Vertical(id="dialog"):
            yield Static(
                f"[b]{b.name} may still be billing.[/b]\n"
                f"zone {b.zone}, {b.accelerator}, up {int(b.age_s())} s, "
                f"about {money(b.cost_usd())} so far (estimate).\n\n"
                "Delete it now (then tpuwizard quits), or keep it running: to keep it, type its "
                "name; it bills until you delete it."
            )
            yield Input(placeholder="type the name here to keep it running", id="confirm-name")
            yield Static(id="guard-error")
            with Horizontal():
                yield Button("Delete now", id="delete", variant="error")
                yield Button("Keep it running", id="keep")
                yield Button("Stay", id="stay")

    @on(Button.Pressed, "#delete")
    def delete(self) -> None:
        self.dismiss("delete")

    @on(Button.Pressed, "#keep")
    def keep(self) -> None:
        if self.query_one("#confirm-name", Input).value.strip() == self.billing.name:
            self.dismiss("keep")
        else:
            self.query_one("#guard-error", Static).update(
                f"Type {self.billing.name} exactly to keep it running."
            )

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(None)
