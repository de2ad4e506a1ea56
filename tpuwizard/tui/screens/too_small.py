"""Covers the wizard while the terminal is below its stated minimum, until it is large enough."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_SIZE = (80, 24)


class TooSmallScreen(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static(
            f"The terminal is too small: tpuwizard needs at least {MIN_SIZE[0]}x{MIN_SIZE[1]}. "
            "Make the window larger; the wizard comes back as it was. In a small terminal, "
            "tpuwizard --plain asks the same questions as plain prompts.",
            id="too-small",
        )

    def on_resize(self, event: events.Resize) -> None:
        if self.is_current and event.size.width >= MIN_SIZE[0] and event.size.height >= MIN_SIZE[1]:
            self.dismiss()


def cover_if_too_small(app: App[Any]) -> None:
    """Cover the wizard while the terminal is too small (on resize, and when a step shows).

    Said once, by a screen over the step shown now; it leaves by itself when the terminal is
    large enough again. The bare start screen is never covered: the first step covers itself
    when it shows.
    """
    small = app.size.width < MIN_SIZE[0] or app.size.height < MIN_SIZE[1]
    on_a_step = len(app.screen_stack) > 1 and not isinstance(app.screen, TooSmallScreen)
    if small and on_a_step:
        app.push_screen(TooSmallScreen())
