"""Lines of plain text folded to the widget's width with a hanging indent: a wrapped line goes
on under its own text, not at column 1, and a quoted line (``| ...``) keeps its quote mark."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

QUOTE = "| "


def hang(lines: Iterable[str], width: int) -> list[str]:
    """``lines`` folded to ``width``; continuations indented past the line's own indent."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width or width < 20:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")))
        quoted = line[len(indent) :].startswith(QUOTE)
        more = indent + (QUOTE if quoted else "  ")
        out += textwrap.wrap(line, width, subsequent_indent=more, break_on_hyphens=False) or [""]
    return out


class HangingLines(Widget):
    """Plain text, never markup: script output and [wN] prefixes show as they are."""

    DEFAULT_CSS = """
    HangingLines {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(self, lines: Iterable[str], id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = list(lines)

    @property
    def plain(self) -> str:
        """The lines as given, unfolded."""
        return "\n".join(self.lines)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(hang(self.lines, width))

    def render(self) -> Text:
        return Text("\n".join(hang(self.lines, self.content_size.width)))
