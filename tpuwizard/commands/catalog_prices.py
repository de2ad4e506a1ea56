"""`status`'s costs at the Cloud Billing Catalog's prices where a read of it is on disk: the
cached read only, never a call (status must answer at once); `zones --refresh-prices` or `fit
--json --refresh-prices` reads it. Where the catalog has no SKU for a resource, its cost stays the
offline table's (a Flex-start one's stays "at most" on-demand's); where it has one, that price
replaces it, Flex-start's "at most" too."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.session.session import Session


def priced(found: list[Billable], session: Session) -> tuple[list[Billable], str]:
    """``found`` with each billing resource's cost at the catalog's price where the cached read
    has its SKU, and the words that say so (empty where no figure came from the catalog)."""
    from tpuwizard.core.prices.quote import CATALOG, quote
    from tpuwizard.session.prices import cached_book

    book = cached_book(session)
    if book is None:
        return list(found), ""
    out, used = [], False
    for b in found:
        r = b.resource
        q = quote(book, "", r.accelerator, r.route, r.zone) if b.billing else None
        if q is not None and q.source == CATALOG and q.hourly is not None:
            b = dataclasses.replace(b, cost_usd=round(q.hourly * max(0.0, b.age_s) / 3600, 4))
            used = True
        out.append(b)
    if not used:
        return out, ""
    return (
        out,
        f"; per-hour prices from the Cloud Billing Catalog (read {book.date}) where it has them",
    )
