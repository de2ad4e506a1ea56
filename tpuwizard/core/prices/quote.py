"""One slice's price per hour in one zone, on one route, from the Billing Catalog where its SKU
was read, else from the offline table (core/plan/cost.py), always saying which and, where the
catalog has no figure, why not. Flex-start's "at most on-demand" stays only beside the offline
table: where the catalog has Flex-start's SKU, that is its price."""

from __future__ import annotations

from tpuwizard.core.prices.cache import FLEX, ON_DEMAND, SPOT, PriceBook

# The catalog and the offline table (core/plan) are imported where a figure is missed: a price
# found in a book read from disk imports neither (benchmarks/price_cache.py).

_MODEL = {"vm": ON_DEMAND, "on-demand": ON_DEMAND, "spot": SPOT, "flex": FLEX}
_MODEL_WORDS = {ON_DEMAND: "on-demand", SPOT: "spot", FLEX: "Flex-start"}
# The generations whose SKUs the reader knows by name (skus.py); the others' are not read.
READ_GENERATIONS = ("v5e", "v5p", "v6e")
CATALOG = "catalog"
# Beside "no SKU ... in this region": the offline table's list price stands in (cost.py's
# LIST_PRICE_NOTE, without saying "in this region" a second time).
LIST_PRICE_SHOWN = "the generation's list price instead"
OFFLINE = "offline"
_NO_PRICE = float("inf")


class Quote:
    """``hourly``: USD per hour (None: no figure; ``at_most`` then bounds it where it can).
    ``source``: CATALOG or OFFLINE; ``label``: where the figure is from and its date;
    ``note``: why it is not the catalog's, or empty when it is; ``sku``: the catalog's SKU id
    the figure is from (empty for the offline table's)."""

    __slots__ = ("at_most", "hourly", "label", "note", "sku", "source")

    def __init__(
        self,
        hourly: float | None,
        source: str,
        label: str,
        note: str = "",
        at_most: float | None = None,
        sku: str = "",
    ) -> None:
        self.hourly, self.source, self.label = hourly, source, label
        self.note, self.at_most, self.sku = note, at_most, sku

    def as_json(self) -> dict[str, str | None]:
        return {
            "source": self.source,
            "label": self.label,
            "note": self.note,
            "sku": self.sku or None,
        }

    def __repr__(self) -> str:
        return f"Quote({self.hourly!r}, {self.source!r}, {self.label!r}, {self.note!r})"


def offline_label() -> str:
    from tpuwizard.core.plan import cost

    return cost.offline_label()


def quote(
    book: PriceBook | None, why_no_book: str, accelerator: str, route: str, zone: str
) -> Quote:
    """``accelerator`` on ``route`` in ``zone``: the catalog's SKU from ``book``, else the
    offline table's figure with why (``why_no_book`` when there is no book at all)."""
    model, region = _MODEL.get(route, route), zone.rsplit("-", 1)[0]
    if book is not None:
        # The slice's generation and chips as saved with the book; else the catalog's.
        named = book.slices.get(accelerator) or _slice(accelerator)
        found = book.sku_price(named[0], model, region)
        if found is None:
            why = _no_sku(_slice(accelerator)[0], model)
        elif (hourly := found[0] * named[1]) < _NO_PRICE:  # infinity and NaN are no price
            label = f"Cloud Billing Catalog, read {book.date}"
            return Quote(round(hourly, 4), CATALOG, label, sku=found[1])
        else:  # a figure that overflows times the chips: a damaged read, never shown as $inf
            why = f"the Billing Catalog's figure for {accelerator} is no price (${hourly:.3g}/h)"
    else:
        why = f"the Billing Catalog could not be read: {why_no_book}"
    return _offline(accelerator, route, zone, why)


def _slice(accelerator: str) -> tuple[str, int]:
    """(generation, chips) of a slice name, by the catalog (a bad name raises its error)."""
    from tpuwizard.core.plan import catalog

    s = catalog.parse_accelerator(accelerator)
    return s.generation.key, s.chips


def _no_sku(gen: str, model: str) -> str:
    if gen not in READ_GENERATIONS:
        if gen == "tpu7x":
            return "no report names TPU7x's Billing Catalog SKU, so tpuwizard reads none"
        return (
            f"tpuwizard reads Google's price list for {', '.join(READ_GENERATIONS)} only, not "
            f"for {gen}"
        )
    # Region-free, so that one footnote says it for every zone it applies to.
    return f"the Billing Catalog has no {_MODEL_WORDS[model]} SKU for {gen} in this region"


def _offline(accelerator: str, route: str, zone: str, why: str) -> Quote:
    from tpuwizard.core.plan import catalog, cost

    figure = cost.offline_zone_price(catalog.parse_accelerator(accelerator), route, zone)
    if figure.note == cost.LIST_PRICE_NOTE:  # "in this region" once: ``why`` says it already
        note = f"{why}; {LIST_PRICE_SHOWN}"
    else:
        note = why if not figure.note else f"{why}; {figure.note}"
    return Quote(figure.hourly, OFFLINE, offline_label(), note, figure.at_most)


def price_source_line(quotes: list[Quote], why_no_book: str = "") -> str:
    """One line under a price table: whose prices these are, and the date of each source;
    ``why_no_book``: why the catalog was not read (or not re-read)."""
    labels = list(dict.fromkeys(q.label for q in quotes if q.source == CATALOG))
    why = f" ({why_no_book})" if why_no_book else ""
    if not labels:
        return f"Prices: the {offline_label()}{why}."
    offline = any(q.source == OFFLINE for q in quotes)
    rest = f"; the {offline_label()} where marked *" if offline else ""
    return f"Prices: the {labels[0]}{why}{rest}."
