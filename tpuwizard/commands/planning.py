"""Planning: capacity (fit) and zones."""

from __future__ import annotations

import re
from pathlib import Path

import click

from tpuwizard.commands.common import cloud_errors, open_session, print_json, say, split_list
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_FAILED


class _SizeCommand(click.Command):
    """``fit -5``: click reads a negative number as an unknown option; say what it is instead."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        typed_args = list(args)  # click's parser consumes the list it is given
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as err:
            typed = next((a for a in typed_args if a.startswith(err.option_name)), "")
            if not re.fullmatch(r"-\.?\d.*", typed):
                raise
            raise BadInput(
                f"'{typed}' is a negative size: a size must be above zero, such as 48 or 48GiB."
            ) from None


@click.command(cls=_SizeCommand)
@click.argument("size", required=False)
@click.option("--params", help="Parameter count instead of a size: 7B, 350M, 1.5e9.")
@click.option(
    "--recipe",
    default="bf16-adam",
    show_default=True,
    help="Bytes per parameter: adam-fp32 16, bf16-adam 12, mixed-adam 18, "
    "inference-bf16 2, inference-int8 1.",
)
@click.option("--slices", help="Comma-separated slices to compare, e.g. v5litepod-4,v6e-4.")
@click.option("--generation", help="Only these generations, e.g. v5e,v6e.")
@click.option("--single-host", is_flag=True, help="Only slices that are one VM.")
@click.option("--max-chips", type=int, help="Only slices with at most this many chips.")
@click.option(
    "--usable",
    type=float,
    default=None,
    help="Fraction of nominal HBM usable by your program (default 0.94).",
)
@click.option(
    "--receipt",
    "receipt_file",
    type=click.Path(path_type=Path),
    help="A TPU receipt: its measured bytes_limit replaces the reserve for that generation.",
)
@click.option(
    "--route",
    type=click.Choice(["vm", "spot", "flex", "on-demand"]),
    default="vm",
    show_default=True,
    help="Which price to show, by launch's route names: vm (on demand), spot, flex. "
    "on-demand is accepted for vm.",
)
@click.option(
    "--program",
    type=click.Path(dir_okay=False),
    help="Your training program: compile its step for each slice (see examples/).",
)
@click.option(
    "--function",
    "function_name",
    default="tpuwizard_plan",
    show_default=True,
    help="With --program: the function that takes the mesh and returns (step, args).",
)
@click.option("--mesh", "mesh_axes", help="With --program: mesh axes, e.g. data=4,model=2.")
@click.option(
    "--method",
    type=click.Choice(["auto", "tpu-compile", "shapes-only"]),
    default="auto",
    show_default=True,
    help="With --program: compile with libtpu, or only count the state from the shapes.",
)
@click.option("--no-cache", is_flag=True, help="With --program: compile again, ignoring the cache.")
@click.option("--sandbox", is_flag=True, help="With --json: the practice catalog's prices.")
@click.option("--refresh-prices", is_flag=True, help="With --json: read the Billing Catalog first.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def fit(
    size: str | None,
    params: str | None,
    recipe: str,
    slices: str | None,
    generation: str | None,
    single_host: bool,
    max_chips: int | None,
    usable: float | None,
    receipt_file: Path | None,
    route: str,
    program: str | None,
    function_name: str,
    mesh_axes: str | None,
    method: str,
    no_cache: bool,
    sandbox: bool,
    refresh_prices: bool,
    as_json: bool,
) -> None:
    """Which TPU slices hold a training state of SIZE (48, 48GiB, 51.5GB), or your program?"""
    from tpuwizard.commands.zone_prices import fit_prices
    from tpuwizard.core.plan import fit as fitting

    route = "vm" if route == "on-demand" else route  # one spelling of the routes everywhere

    if program is not None:
        if size is not None or params is not None:
            raise BadInput("Give either --program FILE or a size (or --params), not both.")
        reserve = fitting.DEFAULT_RESERVE if usable is None else 1 - _usable(usable)
        chosen = fitting.select_slices(
            split_list(slices), split_list(generation), single_host, max_chips
        )
        _fit_program(
            program,
            chosen,
            function=function_name,
            mesh=mesh_axes,
            method=None if method == "auto" else method,
            reserve=reserve,
            route=route,
            use_cache=not no_cache,
            as_json=as_json,
        )
        return
    if (size is None) == (params is None):
        raise BadInput(
            "Give either a state size (tpuwizard fit 48GiB) or --params 7B "
            "[--recipe bf16-adam], not both and not neither."
        )
    per_param = None
    if params is not None:
        per_param = fitting.bytes_per_param(recipe)
        state = fitting.state_from_params(fitting.parse_params(params), recipe)
    else:
        try:
            state = fitting.parse_size_gib(size or "")
        except fitting.LooksLikeParams as err:
            raise BadInput(f"{err} Type instead: tpuwizard fit {err.cli_line}") from None
    reserve = fitting.DEFAULT_RESERVE if usable is None else 1 - _usable(usable)
    chosen = fitting.select_slices(
        split_list(slices), split_list(generation), single_host, max_chips
    )
    if not chosen:
        raise BadInput(
            "No slice matches those filters: loosen --generation, --max-chips or --single-host."
        )
    measured: dict[str, float] = {}
    if receipt_file is not None:
        from tpuwizard.core.evidence.receipt import load_receipt, usable_hbm_gib_per_chip

        key, gib = usable_hbm_gib_per_chip(load_receipt(receipt_file))
        measured[key] = gib
        say(f"Usable HBM per {key} chip from {receipt_file}: {gib:.2f} GiB (measured).")
    fits = fitting.plan(state, chosen, reserve, route, measured)
    if as_json:
        print_json(
            {
                "state_gib": round(state, 6),
                "bytes_per_param": per_param,
                "slices": [f.to_dict() for f in fits],
                "prices": fit_prices([f.name for f in fits], sandbox, refresh_prices),
            }
        )
        return
    from tpuwizard.render import render_fit

    render_fit(
        state,
        per_param,
        recipe if params else None,
        fits,
        route,
        _verdict(state, fits, reserve, route),
        fitting.ACTIVATION_NOTE,
    )


def _verdict(state: float, fits: list, reserve: float, route: str) -> str:
    from tpuwizard.core.handover.larger import verdict_with_larger

    return verdict_with_larger(state, fits, reserve, route)


def _usable(usable: float) -> float:
    if not (0 < usable <= 1):
        raise BadInput(
            f"--usable must be a fraction above 0 and at most 1, such as 0.94; got {usable}."
        )
    return usable


def _fit_program(program: str, chosen: list, as_json: bool, **options: object) -> None:
    """``fit --program``: compile the user's step for each slice; rows appear as they finish."""
    from tpuwizard.core.plan import program_advice, program_fit

    if not chosen:
        raise BadInput(
            "No slice matches those filters: loosen --generation, --max-chips or --single-host."
        )
    planner = program_fit.ProgramPlanner(program, chosen, **options)  # type: ignore[arg-type]
    if planner.method == "shapes-only":
        say(
            "libtpu is not installed here, so nothing is compiled: the table counts only the "
            f"state's bytes from its shapes. For the real compile: {program_fit.INSTALL_LINE} "
            "(Linux on x86-64)."
        )
    if not as_json:
        say(f"Compiling {program} for {len(chosen)} slice(s) ({planner.method})...")
    results = []
    try:
        for result in planner.results():
            results.append(result)
            if not as_json:
                say(f"  {result.name}: {'cached' if result.cached else f'{result.seconds:.1f} s'}")
    except program_fit.ProgramInputError as err:
        if err.kind != "no-function":
            raise
        raise BadInput(f"{err} Or name another with --function.") from None
    advice = program_advice.overall(results)
    if as_json:
        print_json(
            {
                "program": str(planner.program),
                "method": planner.method,
                "slices": [r.to_dict() for r in results],
                "advice": advice,
            }
        )
        return
    from tpuwizard.render import render_program_fit

    render_program_fit(str(planner.program), planner.method, results, str(options["route"]), advice)


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
    type=click.Choice(["auto", "tpu-api", "compute"]),
    default="auto",
    show_default=True,
    help="With --accelerator: only zones where this backend offers it (auto: either).",
)
@click.option(
    "--route",
    type=click.Choice(["vm", "spot", "flex"]),
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
    from tpuwizard.core.cloud.diagnose import Context
    from tpuwizard.core.cloud.zones import unconfirmed_zones
    from tpuwizard.core.plan import catalog

    runtime = None
    unusable: dict[str, str] | None = None  # with --route: per zone, why the route cannot use it
    if backend != "auto" and not accelerator:
        raise BadInput("--backend narrows the zones offering a type: add --accelerator TYPE.")
    if route and not accelerator:
        raise BadInput(
            "--route prices and checks the zones offering a type: add --accelerator TYPE."
        )
    if accelerator:
        try:
            runtime = catalog.parse_accelerator(accelerator).generation.runtime_version
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
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
        with cloud_errors(Context(project=session.project, accelerator=accelerator)):
            answer = session.zone_survey(refresh=refresh, strict=True)
        surveyed_for = session.project
    survey = answer.survey
    from tpuwizard.commands import zone_prices

    price_book = (
        None if live is False else zone_prices.price_book_for(session, accelerator, refresh_prices)
    )
    table = survey.narrowed(accelerator)
    offers = None
    if accelerator:  # per zone, which backend offers it: the survey's TPU API, Compute's catalog
        from tpuwizard.core.cloud.ai_zones import visible_ai_zones
        from tpuwizard.core.cloud.backend_choice import zone_offers

        shown_ai = visible_ai_zones(accelerator, survey.zones)
        offers = zone_offers(accelerator, table, survey.source, shown_ai)
        if backend != "auto":
            offers = [o for o in offers if any(b == backend for b, _ in o.backends)]
        # The zones that lately had capacity for it first (the attempt history).
        order = answer.by_recent_success(accelerator, [o.zone for o in offers])
        offers.sort(key=lambda o: order.index(o.zone))
        if route:  # the route's usable zones first, the cheapest first, as the wizard orders them
            rows = zone_survey.route_zones(
                accelerator, route, [o.zone for o in offers], unconfirmed_zones(survey, accelerator)
            )
            unusable = {r.zone: r.unusable for r in rows}
            ranked = list(unusable)
            offers.sort(key=lambda o: ranked.index(o.zone))
        table = {o.zone: [accelerator] for o in offers}
    last_tried = answer.last_tried(accelerator) if accelerator else {}
    quotes = zone_prices.quotes_for(price_book, accelerator, route or "vm", list(table))
    if as_json:
        # failures: each zone that could not be surveyed, and why (NOT_AVAILABLE: refused).
        doc: dict[str, object] = {
            "source": survey.source,
            "zones": table,
            "failures": survey.failures,
            # The catalog's AI zones: "listed" by the live survey, "not visible" to this
            # project (hidden until AI zone visibility is on), or "documented" (the catalog's).
            "ai_zones": zone_prices.ai_zone_states(accelerator, survey.zones, survey.source),
        }
        if accelerator and offers is not None:
            doc.update(
                accelerator=accelerator,
                runtime_version=runtime,
                image_family=catalog.image_family(accelerator),
                backends={
                    o.zone: [{"backend": b, "source": src} for b, src in o.backends] for o in offers
                },
                # The route's (on-demand without --route), per hour, an estimate from the
                # catalog's prices (None: unknown; for Flex-start, price_at_most_usd bounds it).
                price_per_hour_usd=zone_prices.hourly(quotes, accelerator, route, table),
                # Where each price is from: the Billing Catalog (with the date it was read) or
                # the offline table, and why not the catalog's.
                price_sources={z: q.as_json() for z, q in quotes.items()},
                # What the last attempt there found, and when: "no capacity 12 min ago".
                last_tried={z: w for z, w in last_tried.items() if z in table},
            )
            if route and unusable is not None:
                doc.update(
                    route=route,
                    price_at_most_usd=zone_prices.at_most(quotes, accelerator, route, table),
                    # Per zone: "" where the route can use it, else why not.
                    unusable={z: unusable[z] for z in table},
                )
        print_json(doc)
    else:
        from tpuwizard.render import render_zones
        from tpuwizard.session_text import survey_words

        label = survey_words(answer)
        unconfirmed = unconfirmed_zones(survey, accelerator)
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
        )
        from tpuwizard.commands.choosing import say_refused_once

        say_refused_once(surveyed_for, survey.refused, "no TPU can be made there", "failures")
        zone_prices.say_notes(quotes, price_book, accelerator, survey.zones, survey.source)
    if accelerator and not table:
        raise click.exceptions.Exit(EXIT_FAILED)
