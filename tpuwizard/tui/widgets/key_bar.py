"""The keys that work now, on one line at the bottom of each step; a click on one presses it.

They are the keys of the screen on top: a step's own, or those of the dialog open over it (the
quit guard's Enter is its focused button, never the step's Next). One widget that draws them,
instead of Textual's ``Footer``, which mounts a widget per key and composes them only after the
first frame (so every step was laid out and drawn twice before it settled). The command
palette's key sits at the right end, as in the Footer.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

Shown = tuple[str, Binding, bool]  # the key pressed, its binding, whether it is enabled now


class KeyBar(Widget):
    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[tuple[int, int, str]] = []  # (first column, end column, key) drawn

    def on_mount(self) -> None:
        self.listen_to(self.screen)
        self.app.screen_change_signal.subscribe(self, self.screen_changed)

    def on_unmount(self) -> None:
        self.app.screen_change_signal.unsubscribe(self)

    def listen_to(self, screen: Screen[object]) -> None:
        """Redraw when the keys of ``screen`` change (focus moved, an action was enabled)."""
        screen.bindings_updated_signal.unsubscribe(self)  # once per screen, however often shown
        screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def screen_changed(self, screen: Screen[object]) -> None:
        self.listen_to(screen)  # a dialog opened over the step: its keys now
        self.refresh()

    def bindings_changed(self, screen: Screen[object]) -> None:
        self.refresh()  # one line, drawn again: its size never changes

    def shown_bindings(self) -> tuple[list[Shown], Shown | None]:
        """The top screen's bindings to show (one per action, in order), and the palette's."""
        active = self.app.screen.active_bindings
        palette_key = self.app.COMMAND_PALETTE_BINDING if self.app.ENABLE_COMMAND_PALETTE else None
        shown: dict[str, Shown] = {}
        palette = None
        for key, (_node, binding, enabled, _tooltip) in active.items():
            if key == palette_key:
                palette = (key, binding, enabled)
            elif binding.show and binding.action not in shown:
                shown[binding.action] = (key, binding, enabled)
        return list(shown.values()), palette

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        words_style = self.get_component_rich_style("key-bar--description")
        keys, palette = self.shown_bindings()
        line, spans = Text(no_wrap=True, overflow="crop"), []
        for key, binding, enabled in keys:
            start = line.cell_len
            line.append(f" {self.app.get_key_display(binding)} ", key_style)
            line.append(f"{binding.description} ", words_style)
            if not enabled:
                line.stylize("dim", start)
            spans.append((start, line.cell_len, key))
        if palette is not None:
            key, binding, _enabled = palette
            right = Text.assemble(
                ("│", words_style),
                (f" {self.app.get_key_display(binding)} ", key_style),
                (f"{binding.description} ", words_style),
            )
            start = max(line.cell_len + 1, self.size.width - right.cell_len)
            line.append(" " * (start - line.cell_len))
            line.append_text(right)
            spans.append((start, line.cell_len, key))
        self.spans = spans
        return line

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self.spans:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
