"""`status`'s prices: the cached read of the Cloud Billing Catalog, installed as the session's
prices without a call (status must answer at once; `zones --refresh-prices` or `fit --json
--refresh-prices` reads it), so every cost it shows (its resources', kept nodes', others') is the
catalog's where that read has the SKU, Flex-start's "at most" replaced by its own price; else the
offline table's, labelled. ``--json`` gives each resource's price with its source and SKU."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.prices.cache import PriceBook
    from tpuwizard.session.session import Session

READ_AGAIN = "tpuwizard zones --accelerator TYPE --refresh-prices reads it"
NOT_READ = f"not read yet: {READ_AGAIN}"


def use_cached_prices(session: Session) -> tuple[PriceBook | None, str]:
    """Price every figure from the read on disk, if any, without a call: (the book, "") or
    (None, why there is none)."""
    from tpuwizard.core.prices.live import BookPrices
    from tpuwizard.session.prices import cached_read, use_prices

    book, set_aside = cached_read(session)
    if book is None and set_aside:  # the offline table's figures, and why (status says it)
        return None, f"{set_aside}; {READ_AGAIN}"
    if book is None:
        return None, NOT_READ
    why = "" if book.fresh() else "over a day old, not read again by status, which makes no call"
    use_prices(BookPrices(book, why))
    return book, why


def price_entry(b: Billable, found: tuple[PriceBook | None, str]) -> dict[str, object]:
    """``b``'s price per hour for ``--json``: the figure, where it is from (with the date) and
    the catalog's SKU, or why the offline table's stands."""
    from tpuwizard.core.prices.quote import quote

    r = b.resource
    q = quote(found[0], found[1], r.accelerator, r.route, r.zone)
    return {"usd_per_hour": q.hourly, "at_most": q.at_most, **q.as_json()}
