"""Planning: capacity (fit); the zones that offer a type are commands/zones.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tpuwizard.commands.common import Number, Whole, print_json, say, split_list
from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice
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
@click.option("--accelerator", help="One slice, as launch names it (the same as --slices NAME).")
@click.option("--generation", help="Only these generations, e.g. v5e,v6e.")
@click.option("--single-host", is_flag=True, help="Only slices that are one VM.")
@click.option("--max-chips", type=Whole(), help="Only slices with at most this many chips.")
@click.option(
    "--usable",
    type=Number(),
    default=None,
    help="Fraction of nominal HBM usable by your program, for every generation. Default: each "
    "generation's usable HBM in tpuwizard's catalog (v5e 15.75 GiB per chip, measured; v6e "
    "31.25 GiB and v4 30.75 GiB, from compile errors), else 0.94 of nominal, unconfirmed.",
)
@click.option(
    "--receipt",
    "receipt_file",
    type=click.Path(path_type=Path),
    help="A TPU receipt: its measured bytes_limit is the usable HBM for that generation "
    "(with --program too).",
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
@click.option(
    "--jax",
    "worker_jax",
    metavar="VERSION",
    help="With --program: the worker's JAX from tpuwizard's table (default: its default), "
    "said beside the JAX that compiles (this computer's).",
)
@click.option("--no-cache", is_flag=True, help="With --program: compile again, ignoring the cache.")
@click.option(
    "--measure",
    is_flag=True,
    help="With --program, on a TPU VM: also run the step on the TPU at hand and show its "
    "measured peak HBM and step time beside the prediction (that slice's row only).",
)
@click.option(
    "--node",
    "node",
    help="With --program --measure: measure on this kept node (from `tpuwizard up`) through its "
    "run path, streamed and bounded by its deadline. A practice node's figures are its CPU's.",
)
@click.option(
    "--even-if-held",
    is_flag=True,
    help="With --node: measure even when a process tpuwizard did not start holds the node's TPU.",
)
@click.option(
    "--sandbox",
    is_flag=True,
    help="With --json: the practice catalog's prices. With --node: the practice kept node.",
)
@click.option("--refresh-prices", is_flag=True, help="With --json: read the Billing Catalog first.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def fit(
    size: str | None,
    params: str | None,
    recipe: str,
    slices: str | None,
    accelerator: str | None,
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
    worker_jax: str | None,
    no_cache: bool,
    measure: bool,
    node: str | None,
    even_if_held: bool,
    sandbox: bool,
    refresh_prices: bool,
    as_json: bool,
) -> None:
    """Which TPU slices hold a training state of SIZE (48, 48GiB, 51.5GB), or your program?"""
    route = "vm" if route == "on-demand" else route  # one spelling of the routes everywhere
    slices = slices_or_accelerator(slices, accelerator)
    _check_together(size, params, program, worker_jax, measure, node)
    if program is not None:
        reserve, chosen = _slices_asked(usable, slices, generation, single_host, max_chips)
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
            worker_jax=worker_jax,
            receipt_usable=_receipt_usable(receipt_file),
            measure=measure and node is None,
            node=node,
            sandbox=sandbox,
            even_if_held=even_if_held,
        )
        return
    state = _state_asked(size, params, recipe)
    reserve, chosen = _slices_asked(usable, slices, generation, single_host, max_chips)
    if not chosen:
        raise BadInput(NO_SLICE)
    measured = _receipt_usable(receipt_file)
    _fit_state(state, chosen, reserve, route, measured, as_json, sandbox, refresh_prices)


def slices_or_accelerator(slices: str | None, accelerator: str | None) -> str | None:
    """``--accelerator NAME``, the name every other command takes, as ``--slices NAME``."""
    if accelerator is None:
        return slices
    if slices is not None:
        raise BadInput(
            "Give --accelerator for one slice or --slices for several, not both: "
            f"--slices {slices},{accelerator} compares them all."
        )
    if "," in accelerator:
        raise BadInput(
            f"--accelerator takes one slice; to compare several, give --slices {accelerator}."
        )
    return accelerator


NO_SLICE = "No slice matches those filters: loosen --generation, --max-chips or --single-host."


def _check_together(
    size: str | None,
    params: str | None,
    program: str | None,
    worker_jax: str | None,
    measure: bool,
    node: str | None,
) -> None:
    """The options that go only with others, and a state given once: each mistake is said
    before anything is read, the first of them alone."""
    if worker_jax is not None:
        from tpuwizard.core.plan.jax_versions import jax_problems

        if program is None:
            raise BadInput(
                "--jax is for --program: the worker's JAX, said beside the one that compiles."
            )
        if problems := jax_problems(worker_jax):
            raise BadInput(problems[0])
    if measure and program is None:
        raise BadInput("--measure is for --program: it runs your training step on the TPU at hand.")
    if node is not None and not measure:
        raise BadInput("--node is for --program --measure: it measures your step on a kept node.")
    if program is not None and (size is not None or params is not None):
        raise BadInput("Give either --program FILE or a size (or --params), not both.")
    if program is None and (size is None) == (params is None):
        raise BadInput(
            "Give either a state size (tpuwizard fit 48GiB) or --params 7B "
            "[--recipe bf16-adam], not both and not neither."
        )


def _state_asked(size: str | None, params: str | None, recipe: str) -> TrainingState:
    """The training state from SIZE or --params and --recipe; a size typed as a parameter
    count is answered with the line to type instead."""
    from tpuwizard.core.plan import fit as fitting

    try:
        return fitting.training_state(size, params, recipe)
    except fitting.LooksLikeParams as err:
        raise BadInput(f"{err} Type instead: tpuwizard fit {err.cli_line}") from None


def _slices_asked(
    usable: float | None,
    slices: str | None,
    generation: str | None,
    single_host: bool,
    max_chips: int | None,
) -> tuple[float | None, list[Slice]]:
    """``--usable`` as the reserve (None: each generation's own), and the slices to plan over:
    those named (else the default ones), filtered."""
    from tpuwizard.core.plan import fit as fitting

    reserve = None if usable is None else 1 - _usable(usable)
    chosen = fitting.select_slices(
        named_slices(split_list(slices)), split_list(generation), single_host, max_chips
    )
    return reserve, chosen


def _fit_state(
    state: TrainingState,
    chosen: list[Slice],
    reserve: float | None,
    route: str,
    measured: dict[str, float],
    as_json: bool,
    sandbox: bool,
    refresh_prices: bool,
) -> None:
    """``fit SIZE`` (or ``--params``): the state fitted over ``chosen``, cheapest first, as
    one JSON document (priced from the Billing Catalog's read) or a table and its verdict."""
    from tpuwizard.commands.zone_prices import fit_price_read, fit_prices
    from tpuwizard.core.plan import fit as fitting

    found = fit_price_read(sandbox, refresh_prices) if as_json else (None, "")
    fits = fitting.plan(state.gib, chosen, reserve, route, measured)
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

    verdict = _verdict(state.gib, fits, reserve, route)
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


def named_slices(names: list[str] | None) -> list[Slice] | None:
    """``--slices``, parsed where it is read; an unknown name raises :class:`BadInput`."""
    from tpuwizard.core.plan import catalog

    if not names:
        return None
    try:
        return [catalog.parse_accelerator(name) for name in names]
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None


def _verdict(state: float, fits: list, reserve: float | None, route: str) -> str:
    from tpuwizard.core.handover.larger import verdict_with_larger

    return verdict_with_larger(state, fits, reserve, route)


def _receipt_usable(receipt_file: Path | None) -> dict[str, float]:
    """``--receipt``: usable GiB per chip of the receipt's generation, measured by that TPU."""
    if receipt_file is None:
        return {}
    from tpuwizard.core.evidence.receipt import load_receipt, usable_hbm_gib_per_chip

    key, gib = usable_hbm_gib_per_chip(load_receipt(receipt_file))
    say(f"Usable HBM per {key} chip from {receipt_file}: {gib:.2f} GiB (measured).")
    return {key: gib}


def _usable(usable: float) -> float:
    if not (0 < usable <= 1):
        raise BadInput(
            f"--usable must be a fraction above 0 and at most 1, such as 0.94; got {usable}."
        )
    return usable


def _fit_program(
    program: str,
    chosen: list,
    as_json: bool,
    worker_jax: str | None,
    node: str | None = None,
    sandbox: bool = False,
    even_if_held: bool = False,
    **options: object,
) -> None:
    """``fit --program``: compile the user's step for each slice; rows appear as they finish."""
    from tpuwizard.core.plan import jax_versions, program_advice, program_fit, program_result

    if not chosen:
        raise BadInput(NO_SLICE)
    planner = program_fit.ProgramPlanner(program, chosen, **options)  # type: ignore[arg-type]
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
            run = _measure_on_node(planner, chosen, node, sandbox, even_if_held)
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

    render_program_fit(str(planner.program), planner.method, results, str(options["route"]), advice)
