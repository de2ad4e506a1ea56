"""A Log that keeps its newest line in sight unless the reader has scrolled up.

Textual's Log follows new lines only while it is scrolled to its very end; once it shrinks (the
rerun choices mount under it) it is no longer at the end and stops following for good. Here the
log follows while the reader has not scrolled up from where it last left them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.widgets import Log

from tpuwizard.core.terminal_text import visible


class FollowLog(Log):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.left_at = 0.0  # where the log last scrolled itself to

    @property
    def following(self) -> bool:
        """At the end, or where the log left the reader: then it was not scrolled up."""
        return self.scroll_y >= min(self.left_at, self.max_scroll_y)

    def write_lines(self, lines: Iterable[str], scroll_end: bool | None = None) -> FollowLog:
        follow = self.following if scroll_end is None else scroll_end
        # Worker lines reach the terminal through here: shown as cat -v shows them.
        super().write_lines((visible(line) for line in lines), scroll_end=False)
        if follow:
            self.to_end()
        return self

    def on_resize(self) -> None:
        if self.following:
            self.call_after_refresh(self.to_end)

    def to_end(self) -> None:
        self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.left_at = self.scroll_y
