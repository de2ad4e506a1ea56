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
