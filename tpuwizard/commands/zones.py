"""Planning: which zones offer a type, at what price, for which route (``tpuwizard zones``)."""

from __future__ import annotations

import click

from tpuwizard.commands.common import Words, cloud_errors, open_session, print_json
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_FAILED
from tpuwizard.core.routes import CLOUD_ROUTES, Route


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
    backend: str,
    route: str | None,
    as_json: bool,
) -> None:
    """Which zones offer which TPU types."""
    from tpuwizard.core.cloud import gcloud_config
    from tpuwizard.core.cloud import zones as zone_survey
    from tpuwizard.core.cloud.diagnose.diagnosis import Context
    from tpuwizard.core.cloud.zones import unconfirmed_zones
    from tpuwizard.core.plan import catalog

    runtime = None
    slice_ = None  # --accelerator, parsed here once
    unusable: dict[str, str] | None = None  # with --route: per zone, why the route cannot use it
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
        runtime = slice_.generation.runtime_version
    if project:
        gcloud_config.validate_project(project)
    from tpuwizard.session.decision import ZoneAnswer

    if live is False:  # asked for the catalog: no session, no cloud
        from tpuwizard.session.decision import zone_history

        tried = zone_history(False) if accelerator else ()
        answer = ZoneAnswer(zone_survey.documented(), practice=False, attempts=tried)
        surveyed_for = project
    else:  # the session's survey, as the wizard and plain mode show it
        session = open_session(project, sandbox)
        with cloud_errors(Context(project=session.project, accelerator=accelerator, slice=slice_)):
            answer = session.zone_survey(refresh=refresh, strict=True)
        surveyed_for = session.project
    survey = answer.survey
    from tpuwizard.commands import zone_prices

    price_book = (
        None if live is False else zone_prices.price_book_for(session, accelerator, refresh_prices)
    )
    table = survey.narrowed(accelerator)
    offers = None
    if accelerator and slice_ is not None:
        # per zone, which backend offers it: the survey's TPU API, Compute's catalog
        from tpuwizard.core.cloud.ai_zones import visible_ai_zones
        from tpuwizard.core.cloud.backend_choice import zone_offers

        shown_ai = visible_ai_zones(slice_, survey.zones)
        offers = zone_offers(slice_, table, survey.source, shown_ai)
        if backend != Backend.AUTO:
            offers = [o for o in offers if any(b == backend for b, _ in o.backends)]
        # The zones that lately had capacity for it first (the attempt history).
        order = answer.by_recent_success(accelerator, [o.zone for o in offers])
        offers.sort(key=lambda o: order.index(o.zone))
        if route:  # the route's usable zones first, the cheapest first, as the wizard orders them
            rows = zone_survey.route_zones(
                slice_, route, [o.zone for o in offers], unconfirmed_zones(survey, slice_)
            )
            unusable = {r.zone: r.unusable for r in rows}
            ranked = list(unusable)
        else:  # the cheapest first; among equal prices, the one that lately had capacity
            ranked = zone_survey.cheapest_first(slice_, "vm", [o.zone for o in offers])
        offers.sort(key=lambda o: ranked.index(o.zone))
        table = {o.zone: [accelerator] for o in offers}
    last_tried = answer.last_tried(accelerator) if accelerator else {}
    quotes = zone_prices.quotes_for(price_book, slice_, route or "vm", list(table))
    if as_json:
        # failures: each zone that could not be surveyed, and why (NOT_AVAILABLE: refused).
        doc: dict[str, object] = {
            "source": survey.source,
            "zones": table,
            "failures": survey.failures,
            # The catalog's AI zones: "listed" by the live survey, "not visible" to this
            # project (hidden until AI zone visibility is on), or "documented" (the catalog's).
            "ai_zones": zone_prices.ai_zone_states(slice_, survey.zones, survey.source),
        }
        if accelerator and slice_ is not None and offers is not None:
            doc.update(
                accelerator=accelerator,
                runtime_version=runtime,
                image_family=slice_.generation.image_family,
                backends={
                    o.zone: [{"backend": b, "source": src} for b, src in o.backends] for o in offers
                },
                # The route's (on-demand without --route), per hour, an estimate from the
                # catalog's prices (None: unknown; for Flex-start, price_at_most_usd bounds it).
                price_per_hour_usd=zone_prices.hourly(quotes, slice_, route, table),
                # Where each price is from: the Billing Catalog (with the date it was read) or
                # the offline table, and why not the catalog's.
                price_sources={z: q.as_json() for z, q in quotes.items()},
                # What the last attempt there found, and when: "no capacity 12 min ago".
                last_tried={z: w for z, w in last_tried.items() if z in table},
            )
            if route and unusable is not None:
                doc.update(
                    route=route,
                    price_at_most_usd=zone_prices.at_most(quotes, slice_, route, table),
                    # Per zone: "" where the route can use it, else why not.
                    unusable={z: unusable[z] for z in table},
                )
        print_json(doc)
    else:
        from tpuwizard.words.render import render_zones
        from tpuwizard.words.session_text import survey_words

        label = survey_words(answer)
        unconfirmed = unconfirmed_zones(survey, slice_)
        render_zones(
            table,
            label,
            accelerator,
            runtime,
            zone_survey.OFFERED_NOTE,
            {z: why for z, why in survey.failures.items() if z not in survey.refused},
            unconfirmed,
            offers,
            survey.source,
            last_tried,
            route or "vm",
            unusable,
            zone_prices.zone_prices(quotes),
            slice_,
        )
        from tpuwizard.commands.choosing import say_refused_once

        say_refused_once(surveyed_for, survey.refused, "no TPU can be made there", "failures")
        zone_prices.say_notes(quotes, price_book, slice_, survey.zones, survey.source)
    if accelerator and not table:
        raise click.exceptions.Exit(EXIT_FAILED)
