"""`tpuwizard zones`'s prices and AI zones: the figures of the Billing Catalog's prices (the
session reads and quotes them: session/zone_table.py), and the state of each AI zone the catalog
lists. Split from planning.py, which renders them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.core.plan.cost import ZonePrice
    from tpuwizard.core.prices.cache import PriceBook
    from tpuwizard.core.prices.quote import Quote


def hourly(
    quotes: dict[str, Quote], slice_: Slice, route: str | None, zones: Iterable[str]
) -> dict[str, float | None]:
    """zone -> USD per hour on ``route`` (on-demand without one): the quote's, else the
    offline table's (the catalog's own survey)."""
    from tpuwizard.core.plan import cost

    return {
        z: quotes[z].hourly if z in quotes else cost.hourly(slice_, route or "vm", z) for z in zones
    }


def at_most(
    quotes: dict[str, Quote], slice_: Slice, route: str, zones: Iterable[str]
) -> dict[str, float | None]:
    """zone -> the most an hour costs: the catalog's figure where it has one (Flex-start's SKU
    included), else the offline table's bound."""
    from tpuwizard.core.plan import cost

    out: dict[str, float | None] = {}
    for z in zones:
        q = quotes.get(z)
        out[z] = (q.hourly or q.at_most) if q else cost.at_most_hourly(slice_, route, z)
    return out


def zone_prices(quotes: dict[str, Quote]) -> dict[str, ZonePrice] | None:
    """The quotes as render_zones' price cells (None: it computes the offline table's)."""
    from tpuwizard.core.plan.cost import ZonePrice

    return {z: ZonePrice(q.hourly, q.note, q.at_most) for z, q in quotes.items()} or None


def say_notes(
    quotes: dict[str, Quote],
    found: tuple[PriceBook | None, str] | None,
    slice_: Slice | None,
    listed: dict[str, list[str]],
    source: str,
) -> None:
    """Under the table, on stderr and fitted to a pipe's 80 columns as the tables are: whose
    prices these are (and when read), then the AI zones this project cannot see, once."""
    import click

    from tpuwizard.core.cloud.ai_zones import ai_zone_line
    from tpuwizard.core.prices.quote import price_source_line
    from tpuwizard.words.text_wrap import wrap_paragraph

    if quotes and found is not None:
        line = price_source_line(list(quotes.values()), found[1])
        click.echo(wrap_paragraph(line, 80), err=True)
    ai_line = ai_zone_line(slice_, listed, source)
    if ai_line:
        click.echo(wrap_paragraph(ai_line, 80), err=True)


def ai_zone_states(
    slice_: Slice | None, listed: dict[str, list[str]], source: str
) -> dict[str, str]:
    """Each AI zone the catalog lists for the type: "listed" by a live survey, "not visible" to
    this project, or "documented" (the catalog's own survey)."""
    from tpuwizard.core.cloud import ai_zones

    if source != "live":
        return {z: "documented" for z in ai_zones.catalog_ai_zones(slice_)}
    hidden = set(ai_zones.hidden_ai_zones(slice_, listed, source))
    return {
        z: "not visible" if z in hidden else "listed" for z in ai_zones.catalog_ai_zones(slice_)
    }


def fit_price_read(sandbox: bool, refresh: bool) -> tuple[PriceBook | None, str]:
    """``fit --json``'s read of the Billing Catalog: the book on disk, without a call, or with
    ``refresh`` (``--refresh-prices``) read first; installed as the prices every slice's figure
    is from (its cheapest documented region's, where the read has the SKU), so the slices'
    figures and the per-region ones agree. (None, why) where there is none."""
    from tpuwizard.core import paths
    from tpuwizard.core.prices import cache
    from tpuwizard.core.prices.live import BookPrices
    from tpuwizard.session.prices import use_prices

    if refresh:
        from tpuwizard.commands.common import open_session
        from tpuwizard.session.prices import price_book

        book, why = price_book(open_session(None, sandbox), refresh=True)
    else:
        book = cache.load(cache.cache_file(paths.cache_dir(), sandbox))
        why = "" if book else "not read yet: tpuwizard fit --json --refresh-prices reads it"
    if book is not None:
        use_prices(BookPrices(book, why))
    return book, why


def fit_prices(slices: list[Slice], found: tuple[PriceBook | None, str]) -> dict[str, object]:
    """``fit --json``'s prices: per slice, per region where its generation is documented, per
    route (on-demand, spot, Flex-start), each with its source, date and SKU; none until the
    catalog has been read (:func:`fit_price_read`)."""
    from tpuwizard.core.plan.cost import source
    from tpuwizard.core.prices.quote import quote

    book, why = found
    out: dict[str, object] = {}
    # Without a read, the slices' own price_per_hour_usd is the offline table's already, and
    # quoting every region of every slice would cost the CLI's start-up budget for nothing.
    for slice_ in slices if book is not None else []:
        by_region: dict[str, str] = {}  # region -> the first documented zone there
        for zone in (*slice_.zones, *slice_.generation.ai_zones):
            by_region.setdefault(zone.rsplit("-", 1)[0], zone)
        out[slice_.name] = {
            region: {
                route: {"usd_per_hour": q.hourly, "at_most": q.at_most, **q.as_json()}
                for route in (Route.VM, Route.SPOT, Route.FLEX)
                for q in [quote(book, why, slice_.name, route, zone)]
            }
            for region, zone in sorted(by_region.items())
        }
    return {
        "read": book.date if book else None,
        "why_not_read": why or None,
        # Whose figures the slices' price_per_hour_usd are (the read's, where it has the SKU).
        "slices_priced_from": source(),
        "slices": out,
    }
