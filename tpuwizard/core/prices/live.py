"""The session's prices once a read of the Billing Catalog is in (or has failed, or is under
way): what core/plan/cost.py prices every figure with after session/prices.py installs it, so the
meter, Review, Capacity, the summary and plain mode say what the CLI says. Each figure carries
its source: the catalog's SKU with the date read, or the offline table's with why."""

from __future__ import annotations

import functools

from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.cost import ZonePrice, offline_source, offline_zone_price
from tpuwizard.core.prices.cache import PriceBook
from tpuwizard.core.prices.quote import CATALOG, Quote, offline_label, quote

READING = "the Cloud Billing Catalog is being read"


class BookPrices:
    """Prices from ``book`` where it has the SKU, else the offline table's with why: ``why``
    the book is missing or old (a failed read), or ``reading`` while the first read runs."""

    def __init__(self, book: PriceBook | None, why: str = "", reading: bool = False) -> None:
        self.book, self.why, self.reading = book, why, reading

    def zone_price(self, slice_: catalog.Slice, route: str, zone: str | None) -> ZonePrice:
        return self._zone_price(slice_, route, zone)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one per session, kept as long
    def _zone_price(self, slice_: catalog.Slice, route: str, zone: str | None) -> ZonePrice:
        if self.reading:  # not a failure: the offline figure, marked, until the read lands
            offline = offline_zone_price(slice_, route, zone)
            note = f"{READING}; {offline.note}" if offline.note else READING
            return ZonePrice(offline.hourly, note, offline.at_most, offline_label())
        if self.book is None:
            return _cell(quote(None, self.why, slice_.name, route, zone or ""))
        if zone:
            return _cell(quote(self.book, self.why, slice_.name, route, zone))
        return self._cheapest(slice_, route)

    def _cheapest(self, slice_: catalog.Slice, route: str) -> ZonePrice:
        """No zone chosen yet (Capacity, fit): the catalog's price in the cheapest region the
        slice is documented in, saying which; the offline list price where it has none."""
        by_region: dict[str, str] = {}  # region -> the first documented zone there
        for zone in slice_.zones:
            by_region.setdefault(zone.rsplit("-", 1)[0], zone)
        found = {r: quote(self.book, self.why, slice_.name, route, z) for r, z in by_region.items()}
        priced = {r: q for r, q in found.items() if q.source == CATALOG and q.hourly is not None}
        if not priced:  # the offline list price (no zone), with why the catalog has none
            return _cell(quote(self.book, self.why, slice_.name, route, ""))
        region = min(priced, key=lambda r: priced[r].hourly or 0.0)
        low = priced[region]
        where = f"in {region}, its cheapest documented region"
        return ZonePrice(low.hourly, where, None, low.label, low.sku)

    def brief(self) -> str:
        """:meth:`source` in a line for a short screen: the date read, or the first clause of
        why the catalog's figures are not there."""
        if self.reading:
            return f"{offline_label()}, until the Billing Catalog is read"
        if self.book is None:
            why = self.why.split(" (")[0]
            return f"{offline_label()}; the Billing Catalog could not be read: {why}"
        return f"Cloud Billing Catalog, read {self.book.date}, where it has the SKU"

    def source(self) -> str:
        """Whose figures these are and when read, for a line under a table or the summary."""
        if self.reading:
            return f"{offline_source()} until the read lands ({READING})"
        if self.book is None:
            return f"{offline_source()} (the Billing Catalog could not be read: {self.why})"
        why = f", {self.why}" if self.why else ""
        return (
            f"the Cloud Billing Catalog's prices (read {self.book.date}{why}) where it has the "
            f"SKU, else {offline_source()}"
        )


def _cell(found: Quote) -> ZonePrice:
    return ZonePrice(found.hourly, found.note, found.at_most, found.label, found.sku)
