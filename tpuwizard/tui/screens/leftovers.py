"""Shown first when an earlier run left something that may still bill."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tpuwizard.tui.host import host
from tpuwizard.words.bill_words import may_still_be_billing
from tpuwizard.words.figures import spent

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.billable import Billable


class LeftoversScreen(ModalScreen[bool]):
    """Dismissed with True for "Delete now", False to leave them running.

    Esc does not slip past it: like Ctrl+Q it goes to the quit guard, which knows they bill.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.quit", "Quit")]

    def __init__(self, found: list[Billable]) -> None:
        super().__init__()
        self.found = found

    def compose(self) -> ComposeResult:
        practice = host(self).state.practice  # practice bills nothing: said so
        so_far = "if it were real" if practice else "so far"
        rows = "\n".join(
            f"  {b.resource.name}  {b.resource.zone}  {b.resource.accelerator}  "
            f"{b.state}  {'about ' if b.cost_usd is not None else ''}"
            f"{spent(b.cost_usd, b.cost_at_most_usd)} {so_far}"
            for b in self.found
        )
        with Vertical(id="dialog"):
            yield Static(
                f"[b]An earlier run left these, and they {may_still_be_billing(practice)}:[/b]"
                f"\n{rows}",
                id="leftovers",
            )
            with Horizontal():
                yield Button("Delete now", id="delete", variant="error")
                leave = "they keep running" if practice else "they keep billing"
                yield Button(f"Leave them running; {leave}", id="leave")

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "delete")
