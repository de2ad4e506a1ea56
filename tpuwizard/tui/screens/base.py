"""What every step shares: the status bar, the key bar, Esc to go back, F1 / ? for help."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen

from tpuwizard.tui.widgets.key_bar import KeyBar
from tpuwizard.tui.widgets.status_bar import StatusBar

BACK = "back"  # what a step screen is dismissed with when the user goes back


class WizardScreen(Screen[Any]):
    STEP: ClassVar[str] = ""
    HELP: ClassVar[str] = ""
    CAN_GO_BACK: ClassVar[bool] = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield StatusBar(self.STEP)
        with VerticalScroll(id="body"):
            yield from self.compose_body()
        yield KeyBar()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def on_screen_resume(self) -> None:
        # A step shown while the terminal is too small gets the too-small cover at once.
        check = getattr(self.app, "check_size", None)
        if check is not None:
            self.call_after_refresh(check)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Steps that cannot go back do not offer Esc in the footer at all.
        return self.CAN_GO_BACK if action == "back" else True

    def action_back(self) -> None:
        if self.CAN_GO_BACK:
            self.dismiss(BACK)

    def action_help(self) -> None:
        from tpuwizard.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.STEP, self.HELP))
