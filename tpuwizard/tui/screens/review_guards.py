"""Review's F4: the stall guard's minutes and, where the run's node can have it, Autocheckpoint
(the CLI's --stall-timeout and --autocheckpoint). Whether it can is the plan's rule
(LaunchPlan.autocheckpoint_offered), never decided here."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, Switch

from tpuwizard.core.deadlines import STALL_TIMEOUT_MIN
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.guard_rules import guard_problems
from tpuwizard.core.launch.plan.parts import Guards
from tpuwizard.tui.answers import GuardsAnswer
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.guard_text import (
    AUTOCHECKPOINT_HELP,
    AUTOCHECKPOINT_TITLE,
    STALL_HELP,
    STALL_TITLE,
)
from tpuwizard.words.typed_numbers import typed_number

CANNOT = (
    f"{AUTOCHECKPOINT_TITLE}: not for this run. Google offers it to TPU-API nodes of v2, v3, "
    'v4 and v5e, for a spot run with a "Resume after preemption" folder.'
)


def autocheckpoint_label(on: bool) -> str:
    return f"{AUTOCHECKPOINT_TITLE} {'ON' if on else 'OFF'}"


STALL_WANTED = "a number of minutes, 0 or more (0 turns it off)"


def minutes_typed(text: str) -> float | None:
    """The field's minutes; empty is the default (None). BadInput says what is not a number."""
    return None if not text.strip() else typed_number(text, STALL_WANTED)


class GuardsDialog(ModalScreen["GuardsAnswer | None"]):
    """Dismissed with the choices made (OK), or None (Cancel, Esc): nothing changed."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    GuardsDialog #stall-minutes { width: 30; border: round $foreground-muted; }
    GuardsDialog #guard-error { display: none; color: $error; }
    GuardsDialog .switch-label { padding: 1 2 0 1; }
    """

    def __init__(self, chosen: GuardsAnswer, offered: bool) -> None:
        super().__init__()
        self.chosen, self.offered = chosen, offered

    def compose(self) -> ComposeResult:
        minutes = self.chosen.stall_minutes
        with Vertical(id="dialog"):
            yield Static(f"[b]{STALL_TITLE}[/b]{STALL_HELP.removeprefix(STALL_TITLE)}")
            yield Static(
                f"[b]{AUTOCHECKPOINT_TITLE}[/b]"
                + AUTOCHECKPOINT_HELP.removeprefix(AUTOCHECKPOINT_TITLE)
                if self.offered
                else CANNOT
            )
            with Horizontal():
                field = Input(
                    value="" if minutes is None else f"{minutes:g}",
                    placeholder=f"{STALL_TIMEOUT_MIN} (default)",
                    id="stall-minutes",
                )
                field.border_title = f"{STALL_TITLE} (minutes)"
                field.border_subtitle = "0: off"
                yield field
                if self.offered:
                    yield Switch(value=self.chosen.autocheckpoint, id="autocheckpoint")
                    yield Label(
                        autocheckpoint_label(self.chosen.autocheckpoint),
                        id="autocheckpoint-label",
                        classes="switch-label",
                    )
            yield Static(id="guard-error")
            with Horizontal():
                yield Button("OK", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#stall-minutes", Input).focus()

    @on(Switch.Changed, "#autocheckpoint")
    def switched(self, event: Switch.Changed) -> None:
        self.query_one("#autocheckpoint-label", Label).update(autocheckpoint_label(event.value))

    def answer(self) -> GuardsAnswer | str:
        """The choices in the fields, or what is wrong with them (in the wizard's words)."""
        typed = self.query_one("#stall-minutes", Input).value
        try:
            minutes = minutes_typed(typed)
        except BadInput as err:
            return f"{STALL_TITLE}: {err}"
        problems = all_words(guard_problems(Guards(stall_minutes=minutes)), "wizard")
        if problems:
            return problems[0]
        wanted = self.chosen.autocheckpoint
        if self.query("#autocheckpoint"):
            wanted = self.query_one("#autocheckpoint", Switch).value
        return GuardsAnswer(minutes, wanted)

    @on(Input.Submitted, "#stall-minutes")
    @on(Button.Pressed, "#ok")
    def ok(self) -> None:
        answer = self.answer()
        if isinstance(answer, str):
            error = self.query_one("#guard-error", Static)
            error.update(answer)
            error.display = True
            return
        self.dismiss(answer)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
