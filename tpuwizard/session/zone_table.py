"""The zones ``tpuwizard zones`` shows: those offering a type (or every type), narrowed to a
backend, in the one order every front end shows (``ZoneAnswer.route_rows``: the zones that
lately had capacity first, then the route's usable ones, the cheapest first), with what the
attempt history and the Billing Catalog say of each. The command renders it;
``--offline`` builds it from the catalog alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.session.decision import ZoneAnswer

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import ZoneOffer
    from tpuwizard.core.cloud.zones import ZoneSurvey
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.core.prices.cache import PriceBook
    from tpuwizard.core.prices.quote import Quote
    from tpuwizard.core.routes import Route
    from tpuwizard.session.session import Session


@dataclass(frozen=True)
class ZoneQuery:
    """What was asked: every zone, or those offering ``accelerator`` (``slice``, parsed), by
    ``backend``, priced and checked for ``route`` (None: on-demand prices, every zone)."""

    accelerator: str | None = None
    slice: Slice | None = None
    backend: Backend = Backend.AUTO
    route: Route | None = None
    refresh_prices: bool = False  # read the Billing Catalog again, however fresh the cache


@dataclass(frozen=True)
class ZoneTable:
    """The zones to show for a :class:`ZoneQuery`, in their order, and what each row says."""

    query: ZoneQuery
    answer: ZoneAnswer
    table: dict[str, list[str]]  # zone -> the types it offers (with a type: that one)
    offers: list[ZoneOffer] | None  # with a type: per zone, which backend offers it
    unusable: dict[str, str] | None  # with a route: per zone, why it cannot use it ("": it can)
    last_tried: dict[str, str]  # with a type: what the last attempt in each zone found, when
    quotes: dict[str, Quote]  # zone -> its price (empty: the offline table's, no read)
    prices: tuple[PriceBook | None, str] | None  # the Billing Catalog's read, or None: not read

    @property
    def survey(self) -> ZoneSurvey:
        return self.answer.survey

    @property
    def unconfirmed(self) -> frozenset[str]:
        """Zones the catalog lists for the type that the survey did not confirm."""
        from tpuwizard.core.cloud.zones import unconfirmed_zones

        return unconfirmed_zones(self.survey, self.query.slice)


def catalog_answer(query: ZoneQuery) -> ZoneAnswer:
    """``--offline``: the documented catalog, with this computer's attempts for a type (no
    session, no cloud)."""
    from tpuwizard.core.cloud import zones as zone_survey
    from tpuwizard.session.decision import zone_history

    tried = zone_history(False) if query.accelerator else ()
    return ZoneAnswer(zone_survey.documented(), practice=False, attempts=tried)


def zone_table(answer: ZoneAnswer, query: ZoneQuery, session: Session | None) -> ZoneTable:
    """The table for ``query`` from a survey's ``answer``; with a ``session`` and a type, priced
    from the Billing Catalog (cached, or read again with ``refresh_prices``)."""
    prices = None
    if session is not None and query.accelerator:
        from tpuwizard.session.prices import price_book

        prices = price_book(session, query.refresh_prices)
    table = answer.survey.narrowed(query.accelerator)
    offers, unusable = None, None
    if query.accelerator and query.slice is not None:
        offers, unusable = _ordered_offers(answer, query, query.accelerator, query.slice, table)
        table = {o.zone: [query.accelerator] for o in offers}
    quotes: dict[str, Quote] = {}
    if prices is not None and query.slice is not None:
        from tpuwizard.core.prices.quote import quote

        book, why = prices
        route = query.route or "vm"
        quotes = {z: quote(book, why, query.slice.name, route, z) for z in table}
    last_tried = answer.last_tried(query.accelerator) if query.accelerator else {}
    return ZoneTable(query, answer, table, offers, unusable, last_tried, quotes, prices)


def _ordered_offers(
    answer: ZoneAnswer,
    query: ZoneQuery,
    accelerator: str,
    slice_: Slice,
    table: dict[str, list[str]],
) -> tuple[list[ZoneOffer], dict[str, str] | None]:
    """Per zone, which backend offers the type (the survey's TPU API zones, Compute Engine's
    documented ones), narrowed to the backend asked for and ordered as the wizard orders them;
    with a route, why it cannot use each zone."""
    from tpuwizard.core.cloud import zones as zone_survey
    from tpuwizard.core.cloud.ai_zones import visible_ai_zones
    from tpuwizard.core.cloud.backend_choice import zone_offers

    survey = answer.survey
    shown_ai = visible_ai_zones(slice_, survey.zones)
    offers = zone_offers(slice_, table, survey.source, shown_ai)
    if query.backend != Backend.AUTO:
        offers = [o for o in offers if any(b == query.backend for b, _ in o.backends)]
    # The zones that lately had capacity for it first (the attempt history).
    order = answer.by_recent_success(accelerator, [o.zone for o in offers])
    offers.sort(key=lambda o: order.index(o.zone))
    unusable = None
    if query.route:  # the route's order, as the wizard's Zones step shows it
        rows = answer.route_rows(slice_, query.route, [o.zone for o in offers])
        unusable = {r.zone: r.unusable for r in rows}
        ranked = list(unusable)
    else:  # the cheapest first; among equal prices, the one that lately had capacity
        ranked = zone_survey.cheapest_first(slice_, "vm", [o.zone for o in offers])
    offers.sort(key=lambda o: ranked.index(o.zone))
    return offers, unusable
