"""A one-line question with a few answers: ◂ answer ▸, changed with ←/→, Space or a click.

Lighter than Textual's ``Select`` (one widget, no overlay list): the first screen has four of
these, and a Select costs about as much to mount as the rest of that screen together. Enter is
left to the screen (on the wizard's first step it goes on), so it never changes an answer.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class Choice(Widget, can_focus=True):
    """Shows its label on the border and the current answer between arrows."""

    DEFAULT_CSS = """
    Choice {
        height: 3;
        border: round $foreground-muted;
        padding: 0 1;
    }
    Choice:focus {
        border: round $accent;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,space", "step(1)", "Change", key_display="← →"),  # "← → Change"
        Binding("left", "step(-1)", "Previous answer", show=False),
    ]

    value: reactive[Hashable] = reactive[Hashable](None, init=False)

    class Changed(Message):
        def __init__(self, choice: Choice, value: Hashable) -> None:
            super().__init__()
            self.choice = choice
            self.value = value

        @property
        def control(self) -> Choice:
            return self.choice

    def __init__(
        self,
        options: Sequence[tuple[str, Hashable]],
        value: Hashable,
        label: str,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.options = list(options)
        if value not in [v for _, v in self.options]:
            raise ValueError(f"{value!r} is not one of the answers to {label!r}")
        self.border_title = label
        self.set_reactive(Choice.value, value)

    def render(self) -> Content:
        words = next(text for text, v in self.options if v == self.value)
        # The arrows say there is more to choose; the focus shows as the border's colour and
        # as the bold answer, so it does not rest on colour alone.
        return Content.assemble(
            ("◂ ", "dim"), (words, "bold" if self.has_focus else ""), (" ▸", "dim")
        )

    def action_step(self, by: int) -> None:
        values = [v for _, v in self.options]
        self.value = values[(values.index(self.value) + by) % len(values)]

    def on_click(self, event: events.Click) -> None:
        # The left half goes back, the right half forward: the arrows are where they point.
        self.action_step(-1 if event.x < self.size.width // 2 else 1)

    def watch_value(self, value: Hashable) -> None:
        self.post_message(self.Changed(self, value))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
