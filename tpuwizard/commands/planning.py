"""Planning: capacity (fit); the zones that offer a type are commands/zones.py."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import print_json, say
from tpuwizard.commands.options.fit import (
    fit_rules_first,
    program_options,
    receipt_usable,
    slices_options,
    state_options,
)
from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.commands.options.fit import ProgramAsked, SlicesAsked
    from tpuwizard.core.plan.fit import TrainingState
    from tpuwizard.core.plan.program_at_hand import Measurement
    from tpuwizard.core.plan.program_fit import ProgramPlanner


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
@fit_rules_first
@state_options
@slices_options
@program_options
@click.option(
    "--sandbox",
    is_flag=True,
    help="With --json: the practice catalog's prices. With --node: the practice kept node.",
)
@click.option("--refresh-prices", is_flag=True, help="With --json: read the Billing Catalog first.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def fit(
    state: TrainingState | None,
    slices: SlicesAsked,
    program: ProgramAsked | None,
    sandbox: bool,
    refresh_prices: bool,
    as_json: bool,
) -> None:
    """Which TPU slices hold a training state of SIZE (48, 48GiB, 51.5GB), or your program?"""
    if program is not None:
        _fit_program(program, slices, as_json, sandbox)
    elif state is not None:  # the rules let exactly one of them through
        _fit_state(state, slices, as_json, sandbox, refresh_prices)


def _fit_state(
    state: TrainingState, slices: SlicesAsked, as_json: bool, sandbox: bool, refresh_prices: bool
) -> None:
    """``fit SIZE`` (or ``--params``): the state fitted over ``chosen``, cheapest first, as
    one JSON document (priced from the Billing Catalog's read) or a table and its verdict."""
    from tpuwizard.commands.zone_prices import fit_price_read, fit_prices
    from tpuwizard.core.plan import fit as fitting

    found = fit_price_read(sandbox, refresh_prices) if as_json else (None, "")
    chosen = slices.some_chosen()
    route = slices.route
    fits = fitting.plan(state.gib, chosen, slices.reserve, route, receipt_usable(slices.receipt))
    if as_json:
        print_json(
            {
                "state_gib": round(state.gib, 6),
                "bytes_per_param": state.bytes_per_param,
                "slices": [f.to_dict() for f in fits],
                "prices": fit_prices([f.slice for f in fits], found),
            }
        )
        return
    from tpuwizard.words.render import render_fit

    verdict = _verdict(state.gib, fits, slices.reserve, route)
    render_fit(
        state.gib,
        state.bytes_per_param,
        state.recipe,
        fits,
        route,
        verdict,
        fitting.ACTIVATION_NOTE,
    )


def _measure_on_node(
    planner: ProgramPlanner, chosen: list, node: str, sandbox: bool, even_if_held: bool = False
) -> Measurement:
    """``--measure --node``: the step measured on a kept node, its lines streamed on stderr;
    the planner's row for the node's slice carries it."""
    import sys

    from tpuwizard.commands.common import open_session
    from tpuwizard.commands.kept_nodes import open_kept
    from tpuwizard.core.cancel import Cancelled
    from tpuwizard.core.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED
    from tpuwizard.core.launch.workers.held_chip import ChipHeld
    from tpuwizard.core.plan import program_at_hand
    from tpuwizard.session.signals import StopScriptOnSignals
    from tpuwizard.words.event_text import describe

    session = open_session(None, sandbox)
    kept = open_kept(session, node)
    node_slice = kept.entry.resource.slice
    if node_slice.name not in {s.name for s in chosen}:
        raise BadInput(
            f"--node {kept.name} is a {node_slice.name}, and the slices asked for "
            f"({', '.join(s.name for s in chosen)}) do not include it: add {node_slice.name} "
            "to --slices."
        )
    say(f"Running {planner.program.name}'s step on {kept.name} (--measure --node)...")

    def show(event: object) -> None:
        for line in describe(event):  # type: ignore[arg-type]
            say(line)

    with StopScriptOnSignals(say) as stop:
        try:
            said, code = kept.measure(
                planner.program,
                planner.function,
                planner.axes,
                planner.measure_steps,
                show,
                stop.token,
                even_if_held,
            )
        except ChipHeld as held:  # nothing was copied or started: as a run's, exit 1
            from tpuwizard.words.held_chip_text import chip_held_lines

            for line in chip_held_lines(held):
                say(line)
            sys.exit(EXIT_FAILED)
        except Cancelled:
            say(f"Measurement stopped ({stop.token.reason}); {kept.name} is kept.")
            sys.exit(stop.exit_code(EXIT_INTERRUPTED))
    planner.measurement = program_at_hand.from_node(said, code, node_slice)
    return planner.measurement


def _verdict(state: float, fits: list, reserve: float | None, route: str) -> str:
    from tpuwizard.core.handover.larger import verdict_with_larger

    return verdict_with_larger(state, fits, reserve, route)


def _fit_program(asked: ProgramAsked, slices: SlicesAsked, as_json: bool, sandbox: bool) -> None:
    """``fit --program``: compile the user's step for each slice; rows appear as they finish."""
    from tpuwizard.core.plan import jax_versions, program_advice, program_fit, program_result

    # The program's branch reads --receipt (and says so) before it finds no slice.
    measured = receipt_usable(slices.receipt)
    program, chosen, worker_jax, node = (
        asked.path,
        slices.some_chosen(),
        asked.worker_jax,
        asked.node,
    )
    planner = program_fit.ProgramPlanner(
        program,
        chosen,
        function=asked.function,
        mesh=asked.mesh,
        method=asked.method,
        reserve=slices.reserve,
        route=slices.route,
        use_cache=asked.use_cache,
        receipt_usable=measured,
        measure=asked.measure and node is None,
    )
    if planner.method == "shapes-only":
        say(
            "libtpu is not installed here, so nothing is compiled: the table counts only the "
            f"state's bytes from its shapes. For the real compile: {program_fit.INSTALL_LINE} "
            "(Linux on x86-64)."
        )
    # Always this computer's JAX: said first, and where the worker's differs, said so.
    jax_words = jax_versions.compile_words(worker_jax, planner.method == "tpu-compile")
    say(jax_words)
    results = []
    try:
        if planner.measure:
            say(f"Running {program}'s step on the devices at hand (--measure)...")
            run = planner.run_measurement()
            say(f"  {run.slice_name}: {run.label}")
        if node is not None:
            run = _measure_on_node(planner, chosen, node, sandbox, asked.even_if_held)
            say(f"  {run.slice_name}: {run.label}")
        counting = planner.method == "shapes-only"  # nothing compiles: no time per slice
        if not as_json:
            say(program_advice.working_words(program, len(chosen), planner.method))
        for result in planner.results():
            results.append(result)
            if not as_json and not counting:
                say(f"  {result.name}: {'cached' if result.cached else f'{result.seconds:.1f} s'}")
    except program_result.ProgramInputError as err:
        if err.kind != "no-function":
            raise
        raise BadInput(f"{err} Or name another with --function.") from None
    advice = program_advice.overall(results)
    if as_json:
        print_json(
            {
                "program": str(planner.program),
                "method": planner.method,
                "jax": {
                    "compiled_with": jax_versions.laptop_jax(),
                    "worker": worker_jax or jax_versions.DEFAULT.version,
                    "words": jax_words,
                },
                "slices": [r.to_dict() for r in results],
                "advice": advice,
                # The one slice measured on the devices at hand (--measure); every other row
                # is a prediction only.
                "measured_slice": planner.measurement.slice_name if planner.measurement else None,
            }
        )
        return
    from tpuwizard.words.program_table import render_program_fit

    render_program_fit(str(planner.program), planner.method, results, slices.route, advice)
