"""Planning: which zones offer a type, at what price, for which route (``tpuwizard zones``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import Words, cloud_errors, open_session, print_json
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_FAILED
from tpuwizard.core.routes import CLOUD_ROUTES, Route

if TYPE_CHECKING:
    from tpuwizard.session.zone_table import ZoneQuery, ZoneTable


@click.command()
@click.option("--accelerator", help="Only zones offering this type, e.g. v5litepod-4.")
@click.option(
    "--live/--offline",
    default=None,
    help="Ask the TPU API (or the practice sandbox, where the session is practice: the default) "
    "or use the documented catalog.",
)
@click.option("--project", help="Project to survey (default from gcloud).")
@click.option("--sandbox", is_flag=True, help="Survey the local practice sandbox.")
@click.option("--refresh", is_flag=True, help="Ignore the cached live answer.")
@click.option(
    "--refresh-prices",
    is_flag=True,
    help="Read the Cloud Billing Catalog's prices again, however fresh the cached read.",
)
@click.option(
    "--backend",
    type=Words(Backend),
    default="auto",
    show_default=True,
    help="With --accelerator: only zones where this backend offers it (auto: either).",
)
@click.option(
    "--route",
    type=Words(Route, CLOUD_ROUTES),
    default=None,
    help="With --accelerator: this route's price, and whether it can use each zone (the cheapest "
    "usable zone first). Default: on-demand prices, every zone.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def zones(
    accelerator: str | None,
    live: bool | None,
    project: str | None,
    sandbox: bool,
    refresh: bool,
    refresh_prices: bool,
    backend: Backend,
    route: Route | None,
    as_json: bool,
) -> None:
    """Which zones offer which TPU types."""
    from tpuwizard.session.zone_table import catalog_answer, zone_table

    query = _asked(accelerator, backend, route, refresh_prices, project)
    if live is False:  # asked for the catalog: no session, no cloud
        session, answer = None, catalog_answer(query)
    else:  # the session's survey, as the wizard and plain mode show it
        from tpuwizard.core.cloud.diagnose.diagnosis import Context

        session = open_session(project, sandbox)
        with cloud_errors(
            Context(project=session.project, accelerator=accelerator, slice=query.slice)
        ):
            answer = session.zone_survey(refresh=refresh, strict=True)
    found = zone_table(answer, query, session)
    if as_json:
        print_json(_document(found))
    else:
        _say(found, project if session is None else session.project)
    if accelerator and not found.table:
        raise click.exceptions.Exit(EXIT_FAILED)


def _asked(
    accelerator: str | None,
    backend: Backend,
    route: Route | None,
    refresh_prices: bool,
    project: str | None,
) -> ZoneQuery:
    """The options as one query, each checked here: a bad one is said before any survey."""
    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.plan import catalog
    from tpuwizard.session.zone_table import ZoneQuery

    slice_ = None  # --accelerator, parsed here once
    if backend != Backend.AUTO and not accelerator:
        raise BadInput("--backend narrows the zones offering a type: add --accelerator TYPE.")
    if route and not accelerator:
        raise BadInput(
            "--route prices and checks the zones offering a type: add --accelerator TYPE."
        )
    if accelerator:
        try:
            slice_ = catalog.parse_accelerator(accelerator)
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
    if project:
        gcloud_config.validate_project(project)
    return ZoneQuery(accelerator, slice_, backend, route, refresh_prices)


def _document(found: ZoneTable) -> dict[str, object]:
    """``zones --json``: one document."""
    from tpuwizard.commands import zone_prices

    survey, q, table = found.survey, found.query, found.table
    # failures: each zone that could not be surveyed, and why (NOT_AVAILABLE: refused).
    doc: dict[str, object] = {
        "source": survey.source,
        "zones": table,
        "failures": survey.failures,
        # The catalog's AI zones: "listed" by the live survey, "not visible" to this
        # project (hidden until AI zone visibility is on), or "documented" (the catalog's).
        "ai_zones": zone_prices.ai_zone_states(q.slice, survey.zones, survey.source),
    }
    if not q.accelerator or q.slice is None or found.offers is None:
        return doc
    doc.update(
        accelerator=q.accelerator,
        runtime_version=q.slice.generation.runtime_version,
        image_family=q.slice.generation.image_family,
        backends={
            o.zone: [{"backend": b, "source": src} for b, src in o.backends] for o in found.offers
        },
        # The route's (on-demand without --route), per hour, an estimate from the
        # catalog's prices (None: unknown; for Flex-start, price_at_most_usd bounds it).
        price_per_hour_usd=zone_prices.hourly(found.quotes, q.slice, q.route, table),
        # Where each price is from: the Billing Catalog (with the date it was read) or
        # the offline table, and why not the catalog's.
        price_sources={z: quote.as_json() for z, quote in found.quotes.items()},
        # What the last attempt there found, and when: "no capacity 12 min ago".
        last_tried={z: w for z, w in found.last_tried.items() if z in table},
    )
    if q.route and found.unusable is not None:
        doc.update(
            route=q.route,
            price_at_most_usd=zone_prices.at_most(found.quotes, q.slice, q.route, table),
            # Per zone: "" where the route can use it, else why not.
            unusable={z: found.unusable[z] for z in table},
        )
    return doc


def _say(found: ZoneTable, surveyed_for: str | None) -> None:
    """The table on stdout; under it, on stderr, the zones refused to the project (once) and
    whose prices these are."""
    from tpuwizard.commands import zone_prices
    from tpuwizard.commands.choosing import say_refused_once
    from tpuwizard.core.cloud import zones as zone_survey
    from tpuwizard.words.render import render_zones
    from tpuwizard.words.session_text import survey_words

    survey, q = found.survey, found.query
    render_zones(
        found.table,
        survey_words(found.answer),
        q.accelerator,
        q.slice.generation.runtime_version if q.slice is not None else None,
        zone_survey.OFFERED_NOTE,
        {z: why for z, why in survey.failures.items() if z not in survey.refused},
        found.unconfirmed,
        found.offers,
        survey.source,
        found.last_tried,
        q.route or "vm",
        found.unusable,
        zone_prices.zone_prices(found.quotes),
        q.slice,
    )
    say_refused_once(surveyed_for, survey.refused, "no TPU can be made there", "failures")
    zone_prices.say_notes(found.quotes, found.prices, q.slice, survey.zones, survey.source)
