"""How amounts are written, the same in every front end: money and counted things.

Apart from ``event_text`` so that what draws the wizard's first screen (the meter) need not
import the lifecycle events to say a price.
"""

from __future__ import annotations


def money(usd: float | None) -> str:
    return "unknown" if usd is None else f"${usd:,.2f}"


def count(n: int, noun: str) -> str:
    """``1 chip``, ``4 chips``: never ``1 chips``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def price_cell(hourly: float | None, note: str) -> str:
    """A price in a table's $/h column: marked * when ``note`` (under the table, from
    ``price_footnote``) says what it is: a list price, or why there is none."""
    return ("no price" if hourly is None else money(hourly)) + (" *" if note else "")


def price_footnote(notes: list[str]) -> str:
    """The line under a table of ``price_cell``s: what * means, or empty when no cell has it."""
    said = list(dict.fromkeys(n for n in notes if n))
    return f"* {'; '.join(said)}." if said else ""
