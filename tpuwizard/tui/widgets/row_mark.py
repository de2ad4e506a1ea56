"""A word-free mark for the chosen row of a table: ▶ in its own first column, so the choice is
not said by the cursor's colour alone (the README's rule)."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable

MARK = "mark"  # the key of the marking column
SIGN = "▶"


def add_mark_column(table: DataTable[Any]) -> None:
    """The marking column; add it before the table's other columns."""
    table.add_column(" ", key=MARK)


def mark_row(table: DataTable[Any], row: int) -> None:
    """The sign on ``row`` only."""
    for index, key in enumerate(table.rows):
        table.update_cell(key, MARK, SIGN if index == row else "")
