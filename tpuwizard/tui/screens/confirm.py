"""A yes-or-no dialog for a choice that needs a second look (a slice too small for the state)."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismissed with True for ``yes``; Esc and ``no`` dismiss it with False."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "no", "Cancel")]

    def __init__(self, question: str, yes: str, no: str) -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            with Horizontal():
                # The safe answer first, so Enter on the focused button never confirms by accident.
                yield Button(self.no, id="no", variant="primary")
                yield Button(self.yes, id="yes", variant="warning")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_no(self) -> None:
        self.dismiss(False)

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
