"""The help screen (F1 or ?): the keys, and what the current step is for."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

KEYS = """Keys
  Tab / Shift+Tab   move between fields
  Enter             press the focused button, choose the highlighted row
  Esc               {esc}
  F1 or ?           this help
  Ctrl+T            switch between dark and light themes
  Ctrl+Q            quit (first asks about anything that may still bill)"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, step: str, text: str, can_go_back: bool = True) -> None:
        super().__init__()
        self.step, self.text, self.can_go_back = step, text, can_go_back

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            esc = "go back one step (or close this help)" if self.can_go_back else "close this help"
            keys = KEYS.format(esc=esc)
            yield Static(f"[b]Help: {self.step}[/b]\n\n{self.text}\n\n{keys}", id="help-text")
            yield Button("Close", id="close", variant="primary")

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
