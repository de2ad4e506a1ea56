"""Price estimates: chips x catalog price per chip-hour x time. Always an estimate.

A price can depend on the zone (spot prices differ by zone; some regions cost more), on the size
(v2 pods have their own rate) and on the route. Flex-start is billed at its own SKU, which the
catalog has no figure for (None, never the spot price); Google bills it at a discount on
on-demand (catalog.toml, [flex_start_price]), so on-demand's figure is the most it costs:
``at_most_hourly`` and ``at_most`` say that bound, and every front end calls it "at most".

Where the session has read the Cloud Billing Catalog (session/prices.py installs it with
:func:`use_catalog`), every figure here is the catalog's where it has the SKU (Flex-start's own
price included), else this offline table's, each labelled with its source: the meter, Review,
Capacity, the summary and plain mode all price through these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import Route

ROUTE_KEY = {"vm": "on_demand", "on-demand": "on_demand", "spot": "spot"}
LIST_PRICE_NOTE = "list price, may differ in this region"
# No Flex-start figure with a source was found (catalog.toml, [zone_prices]): said, never guessed;
# the bound it has is sourced ([flex_start_price]).
FLEX_PRICE_NOTE = (
    "Flex-start's own price is not published in the catalog; Google bills it at a discount on "
    "on-demand, so on-demand's price is shown as the most it costs"
)


@dataclass(frozen=True)
class ZonePrice:
    """A slice's price per hour in one zone, and how far to trust it: ``note`` is empty for the
    zone's (or its region's) own figure, else says it is the generation's list price, or why
    there is no figure at all. Never a bare "unknown"."""

    hourly: float | None
    note: str
    at_most: float | None = None  # where there is no figure but a bound (Flex-start: on-demand's)
    label: str = ""  # where the figure is from, with its date (empty: this offline table)
    sku: str = ""  # the Billing Catalog's SKU id the figure is from (empty: none)


class CatalogPrices(Protocol):
    """The session's read of the Billing Catalog (core/prices/live.py): a zone's price from
    its SKU where it has one, else this table's, with why."""

    def zone_price(self, slice_: catalog.Slice, route: str, zone: str | None) -> ZonePrice: ...

    def source(self) -> str: ...

    def brief(self) -> str: ...


_catalog: CatalogPrices | None = None


def use_catalog(prices: CatalogPrices | None) -> None:
    """Price from ``prices`` from now on (None: the offline table only). One assignment, so a
    reader on another thread sees the old source or the new one, never half of either."""
    global _catalog
    _catalog = prices


def source() -> str:
    """Whose figures these functions give now, with the date of each source."""
    return _catalog.source() if _catalog is not None else offline_source()


def catalog_source() -> str | None:
    """The installed catalog read's words (:func:`source`); None before the session installs
    one (a screen shown on its own, in a test harness, says the offline table as before)."""
    prices = _catalog
    return prices.source() if prices is not None else None


def catalog_brief() -> str | None:
    """:func:`catalog_source` in a line, for a short screen."""
    prices = _catalog
    return prices.brief() if prices is not None else None


def offline_source() -> str:
    return f"the {offline_label()}"


def offline_label() -> str:
    """The offline table as a figure's label, with its date."""
    return f"offline table ({catalog.sources()['price_date']}, estimate)"


def zone_price(slice_: catalog.Slice, route: str = "vm", zone: str | None = None) -> ZonePrice:
    """What ``slice_`` costs per hour on ``route`` in ``zone``, with what that figure is:
    the session's catalog read where one is installed, else the offline table's."""
    prices = _catalog
    if prices is not None:
        return prices.zone_price(slice_, route, zone)
    return offline_zone_price(slice_, route, zone)


def offline_zone_price(
    slice_: catalog.Slice, route: str = "vm", zone: str | None = None
) -> ZonePrice:
    """The offline table's figure for ``slice_`` on ``route`` in ``zone``."""
    if route == Route.FLEX:
        return ZonePrice(None, FLEX_PRICE_NOTE, _offline_at_most(slice_, route, zone))
    kind = ROUTE_KEY.get(route, route)
    zoned = None if _is_pod_priced(slice_, kind) else _zone_price(slice_.generation.key, kind, zone)
    hourly_usd = _offline_hourly(slice_, route, zone)
    if hourly_usd is None:
        return ZonePrice(None, f"no {route} price for {slice_.generation.key} in the catalog")
    return ZonePrice(hourly_usd, "" if zoned is not None else LIST_PRICE_NOTE)


def _is_pod_priced(slice_: catalog.Slice, kind: str) -> bool:
    pod = catalog.price_table("pod_prices").get(slice_.generation.key, {})
    return kind == "on_demand" and bool(pod) and slice_.chips >= pod.get("min_chips", 1 << 30)


def _zone_price(generation: str, kind: str, zone: str | None) -> float | None:
    """The most specific per-chip price for ``zone``: the zone, its region, then its continent."""
    if not zone:
        return None
    table = catalog.price_table("zone_prices").get(generation, {}).get(kind, {})
    region = zone.rsplit("-", 1)[0]
    for key in (zone, region, region.split("-", 1)[0]):
        if key in table:
            return float(table[key])
    return None


def price_origin(slice_: catalog.Slice, route: str, zone: str | None) -> tuple[str, str]:
    """(where the figure for ``slice_`` on ``route`` in ``zone`` is from, with its date;
    its Billing Catalog SKU id, or "" for the offline table's), for a launch's events."""
    price = zone_price(slice_, route, zone)
    return price.label or offline_label(), price.sku


def per_chip_hour(
    slice_: catalog.Slice, route: str = "vm", zone: str | None = None
) -> float | None:
    """The offline table's USD per chip-hour for ``slice_`` on ``route`` in ``zone``."""
    if route == Route.FLEX:
        return None  # its own SKU; no figure in the catalog
    key = slice_.generation.key
    kind = ROUTE_KEY.get(route, route)
    if _is_pod_priced(slice_, kind):
        return float(catalog.price_table("pod_prices")[key]["on_demand"])
    zoned = _zone_price(key, kind, zone)
    if zoned is not None:
        return zoned
    return slice_.generation.price_per_chip_hour("spot" if kind == "spot" else "on-demand")


def _offline_hourly(
    slice_: catalog.Slice, route: str = "vm", zone: str | None = None
) -> float | None:
    per_chip = per_chip_hour(slice_, route, zone)
    return None if per_chip is None else round(per_chip * slice_.chips, 4)


def _offline_at_most(slice_: catalog.Slice, route: str, zone: str | None) -> float | None:
    if (
        route == Route.FLEX
        and catalog.price_table("flex_start_price").get("at_most") == "on_demand"
    ):
        return _offline_hourly(slice_, "vm", zone)
    return _offline_hourly(slice_, route, zone)


def hourly(slice_: catalog.Slice, route: str = "vm", zone: str | None = None) -> float | None:
    """USD per hour for ``slice_`` on ``route`` in ``zone``; None without a figure."""
    if _catalog is None:  # the offline table's own, without building its note
        return _offline_hourly(slice_, route, zone)
    return zone_price(slice_, route, zone).hourly


def estimate(
    slice_: catalog.Slice, route: str, seconds: float, zone: str | None = None
) -> float | None:
    """USD for ``seconds`` of ``slice_`` on ``route``; None when the catalog has no price."""
    per_hour = hourly(slice_, route, zone)
    return None if per_hour is None else round(per_hour * max(0.0, seconds) / 3600, 4)


def at_most_hourly(slice_: catalog.Slice, route: str, zone: str | None = None) -> float | None:
    """The most ``slice_`` costs per hour on ``route``: its price where there is one; for
    Flex-start without its own, the on-demand price that Google discounts it from."""
    if _catalog is None:
        return _offline_at_most(slice_, route, zone)
    price = zone_price(slice_, route, zone)
    return price.hourly if price.hourly is not None else price.at_most


def at_most(
    slice_: catalog.Slice, route: str, seconds: float, zone: str | None = None
) -> float | None:
    """The most ``seconds`` of ``slice_`` on ``route`` cost (see :func:`at_most_hourly`)."""
    per_hour = at_most_hourly(slice_, route, zone)
    return None if per_hour is None else round(per_hour * max(0.0, seconds) / 3600, 4)


def label(flex: bool = True) -> str:
    """How every figure is labelled: an estimate, with where the prices came from and when;
    ``flex``: a Flex-start figure is among them, so say what its bound is."""
    if _catalog is not None:
        return f"estimate at {_catalog.source()}"
    src = catalog.sources()
    flex_words = (
        "; Flex-start's own price is not published in the catalog, and at most on-demand's "
        "(Google bills it at a discount)"
        if flex
        else ""
    )
    return (
        f"estimate from approximate list prices (a public price-catalog snapshot, read "
        f"{src['price_date']}; per-zone prices from skypilot-catalog v9){flex_words}; check the "
        "pricing page"
    )
