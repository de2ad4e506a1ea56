"""The quit guard of a run on Kaggle: quitting while the kernel may still run names it, in the
words `tpuwizard status` uses for it (its page, and until when Kaggle lets it run), since no
public call cancels it. Nothing bills money there; the weekly TPU quota is spent."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tpuwizard.words.kaggle_text import held_lines

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost

LEAVE = "Quit, leave it on Kaggle"


def guard_kaggle_quit(app: WizardHost) -> bool:
    """Open the guard when the Kaggle run on screen pushed a kernel that may still run; False
    (nothing to guard) otherwise."""
    from tpuwizard.tui.screens.free_run import KaggleRunScreen

    screen = app.screen
    if not isinstance(screen, KaggleRunScreen):
        return False
    seen = screen.route.left_running(screen.last_state)
    if seen is None:
        return False
    words = "\n".join(held_lines(seen))
    app.guard_open = True

    def after(choice: str | None) -> None:
        app.guard_open = False
        if choice == "leave":
            app.finish(0, words)  # said again in the terminal, as status would say it

    app.push_screen(KaggleQuitGuard(words), after)
    return True


class KaggleQuitGuard(ModalScreen[str | None]):
    """Dismissed with "leave" (quit, the kernel stays on Kaggle) or None (stay)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "stay", "Stay")]

    def __init__(self, words: str) -> None:
        super().__init__()
        self.words = words

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("[b]Your kernel may still run on Kaggle:[/b]", id="kaggle-guard-title")
            yield Static(self.words, id="kaggle-guard-text", markup=False)
            yield Static(
                "Quitting stops following it here; `tpuwizard status` asks Kaggle about it "
                "later. Stay to follow it to its receipt."
            )
            with Horizontal():
                yield Button(LEAVE, id="leave", variant="warning")
                yield Button("Stay", id="stay")

    @on(Button.Pressed, "#leave")
    def leave(self) -> None:
        self.dismiss("leave")

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(None)
