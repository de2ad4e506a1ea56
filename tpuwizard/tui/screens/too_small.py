"""Covers the wizard while the terminal is below its stated minimum, until it is large enough."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static

MIN_SIZE = (80, 24)


class TooSmallScreen(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static(
            f"The terminal is too small: tpuwizard needs at least {MIN_SIZE[0]}x{MIN_SIZE[1]}. "
            "Make the window larger; the wizard comes back as it was.",
            id="too-small",
        )

    def on_resize(self, event: events.Resize) -> None:
        if self.is_current and event.size.width >= MIN_SIZE[0] and event.size.height >= MIN_SIZE[1]:
            self.dismiss()
