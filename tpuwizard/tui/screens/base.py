"""What every step shares: the status bar, the key bar, Esc to go back, F1 / ? for help."""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Final, Generic, TypeVar

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen

from tpuwizard.tui.widgets.key_bar import KeyBar
from tpuwizard.tui.widgets.status_bar import StatusBar


class Back(Enum):
    BACK = "back"


BACK: Final = Back.BACK  # what a step screen is dismissed with when the user goes back
AnswerT = TypeVar("AnswerT")  # what a step screen is dismissed with when the user goes on


class StepBody(VerticalScroll):
    """A step's content. A Tab stop only while it holds more than fits (then the arrow keys
    scroll it); otherwise Tab would land on nothing the user can see."""

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0


def cover_if_too_small(app: App[object]) -> None:
    """The too-small cover (screens/too_small.py) over the step shown now, if the terminal is
    below its minimum; called after a refresh, so imported then, not before the first frame."""
    from tpuwizard.tui.screens import too_small

    too_small.cover_if_too_small(app)


class WizardScreen(Screen[AnswerT | Back], Generic[AnswerT]):
    """One step: dismissed with its typed answer, or with ``BACK``."""

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
        with StepBody(id="body"):
            yield from self.compose_body()
        yield KeyBar()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def on_screen_resume(self) -> None:
        # A step shown while the terminal is too small gets the too-small cover at once.
        self.call_after_refresh(cover_if_too_small, self.app)
        held = getattr(self.app, "held_keys", None)  # typed while no step showed: this one's
        if held is not None:
            self.call_after_refresh(held.give, self.app)

    def on_resize(self, event: events.Resize) -> None:
        # And so does a step whose terminal is made too small (the App hears no resize).
        self.call_after_refresh(cover_if_too_small, self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Steps that cannot go back do not offer Esc in the footer at all.
        return self.CAN_GO_BACK if action == "back" else True

    def action_back(self) -> None:
        if self.CAN_GO_BACK:
            self.dismiss(BACK)

    def action_help(self) -> None:
        from tpuwizard.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.STEP, self.HELP, self.CAN_GO_BACK))
