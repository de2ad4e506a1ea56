"""How amounts are written, the same in every front end: money and counted things.

Apart from ``event_text`` so that what draws the wizard's first screen (the meter) need not
import the lifecycle events to say a price.
"""

from __future__ import annotations


def money(usd: float | None) -> str:
    return "unknown" if usd is None else f"${usd:,.2f}"


def spent(estimate_usd: float | None, at_most_usd: float | None) -> str:
    """A cost so far: ``$1.20``; ``at most $1.20`` where only a bound is known (Flex-start's
    price is not published); ``unknown`` where neither is."""
    if estimate_usd is None and at_most_usd is not None:
        return f"at most {money(at_most_usd)}"
    return money(estimate_usd)


def count(n: int, noun: str) -> str:
    """``1 chip``, ``4 chips``: never ``1 chips``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def about(usd: float | None, at_most: float | None = None) -> str:
    """An estimate in words: ``about $1.23``; where the catalog has no figure but a bound
    (Flex-start: on-demand's), ``at most $1.50``; never "about unknown"."""
    if usd is not None:
        return f"about {money(usd)}"
    if at_most is not None:
        return f"at most {money(at_most)}"
    return "a price the catalog does not have"


def short_estimate(usd: float | None, at_most: float | None = None) -> str:
    """The same in a few characters, for the meter: ``~$1.23``, ``<=$1.50``."""
    if usd is None and at_most is not None:
        return f"<={money(at_most)}"
    return "~" + ("no price" if usd is None else money(usd))


def price_cell(hourly: float | None, note: str, at_most: float | None = None) -> str:
    """A price in a table's $/h column: marked * when ``note`` (under the table, from
    ``price_footnote``) says what it is: a list price, a bound, or why there is none."""
    shown = money(hourly) if hourly is not None else None
    if shown is None:
        shown = f"<={money(at_most)}" if at_most is not None else "no price"
    return shown + (" *" if note else "")


def price_footnote(notes: list[str]) -> str:
    """The line under a table of ``price_cell``s: what * means, or empty when no cell has it."""
    said = list(dict.fromkeys(n for n in notes if n))
    return f"* {'; '.join(said)}." if said else ""
