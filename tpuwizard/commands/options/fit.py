"""``fit``'s option groups: the training state asked (SIZE, or ``--params`` and ``--recipe``),
the slices asked (named, filtered, their usable HBM and the route's prices), and the program
(``--program`` and what goes with it); each hands the command its part. The rules across them
(which options go only with others, a state given once) run first, on the values as typed, so
that each mistake is said before anything is read, the first of them alone."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tpuwizard.commands.common import Number, Whole, say, split_list
from tpuwizard.commands.options.group import Command, option_group
from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.core.plan.fit import TrainingState

NO_SLICE = "No slice matches those filters: loosen --generation, --max-chips or --single-host."


@dataclass(frozen=True)
class SlicesAsked:
    """The slices to plan over (named, else the default ones, filtered: maybe none, which each
    branch of fit says at its own point), the HBM reserve ``--usable`` leaves (None: each
    generation's own), the route whose prices are shown (launch's names), and the TPU receipt
    whose measured usable HBM counts (read by :func:`receipt_usable` where the branch reads it)."""

    chosen: list[Slice]
    reserve: float | None
    route: str
    receipt: Path | None = None

    def some_chosen(self) -> list[Slice]:
        """The slices; exit 2 when the filters left none."""
        if not self.chosen:
            raise BadInput(NO_SLICE)
        return self.chosen


@dataclass(frozen=True)
class ProgramAsked:
    """``fit --program``: the program, the function that plans its step, the mesh's axes, the
    compile method (None: auto), the worker's JAX from tpuwizard's table, whether the cache is
    used, and whether the step is measured at hand (``measure``) or on a kept node (``node``,
    ``even_if_held``)."""

    path: str
    function: str
    mesh: str | None
    method: str | None
    worker_jax: str | None
    use_cache: bool
    measure: bool
    node: str | None
    even_if_held: bool


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


def check_together(
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


def fit_rules_first(command: Command) -> Command:
    """The rules across fit's groups, on the values as typed, before any group reads one."""

    @functools.wraps(command)
    def checked(**values: Any) -> Any:
        slices_or_accelerator(values["slices"], values["accelerator"])
        check_together(
            values["size"],
            values["params"],
            values["program"],
            values["worker_jax"],
            values["measure"],
            values["node"],
        )
        return command(**values)

    return checked


def asked_state(size: str | None, params: str | None, recipe: str) -> TrainingState | None:
    """The training state from SIZE or --params and --recipe (None with --program); a size
    typed as a parameter count is answered with the line to type instead."""
    from tpuwizard.core.plan import fit as fitting

    if size is None and params is None:
        return None
    try:
        return fitting.training_state(size, params, recipe)
    except fitting.LooksLikeParams as err:
        raise BadInput(f"{err} Type instead: tpuwizard fit {err.cli_line}") from None


def asked_slices(
    slices: str | None,
    accelerator: str | None,
    generation: str | None,
    single_host: bool,
    max_chips: int | None,
    usable: float | None,
    receipt_file: Path | None,
    route: str,
) -> SlicesAsked:
    """The slices named (else the default ones), filtered: exit 2 for a name that is no TPU
    type or a --usable that is no fraction."""
    from tpuwizard.core.plan import fit as fitting

    reserve = None if usable is None else 1 - _usable(usable)
    named = named_slices(split_list(slices_or_accelerator(slices, accelerator)))
    chosen = fitting.select_slices(named, split_list(generation), single_host, max_chips)
    price_route = "vm" if route == "on-demand" else route  # one spelling of the routes everywhere
    return SlicesAsked(chosen, reserve, price_route, receipt_file)


def asked_program(
    program: str | None,
    function_name: str,
    mesh_axes: str | None,
    method: str,
    worker_jax: str | None,
    no_cache: bool,
    measure: bool,
    node: str | None,
    even_if_held: bool,
) -> ProgramAsked | None:
    if program is None:
        return None
    return ProgramAsked(
        program,
        function_name,
        mesh_axes,
        None if method == "auto" else method,
        worker_jax,
        not no_cache,
        measure,
        node,
        even_if_held,
    )


def named_slices(names: list[str] | None) -> list[Slice] | None:
    """``--slices``, parsed where it is read; an unknown name raises :class:`BadInput`."""
    from tpuwizard.core.plan import catalog

    if not names:
        return None
    try:
        return [catalog.parse_accelerator(name) for name in names]
    except catalog.UnknownAcceleratorError as err:
        raise BadInput(str(err)) from None


def receipt_usable(receipt_file: Path | None) -> dict[str, float]:
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


state_options = option_group(
    "state",
    [
        click.argument("size", required=False),
        click.option("--params", help="Parameter count instead of a size: 7B, 350M, 1.5e9."),
        click.option(
            "--recipe",
            default="bf16-adam",
            show_default=True,
            help="Bytes per parameter: adam-fp32 16, bf16-adam 12, mixed-adam 18, "
            "inference-bf16 2, inference-int8 1.",
        ),
    ],
    asked_state,
)
slices_options = option_group(
    "slices",
    [
        click.option("--slices", help="Comma-separated slices to compare, e.g. v5litepod-4,v6e-4."),
        click.option(
            "--accelerator", help="One slice, as launch names it (the same as --slices NAME)."
        ),
        click.option("--generation", help="Only these generations, e.g. v5e,v6e."),
        click.option("--single-host", is_flag=True, help="Only slices that are one VM."),
        click.option("--max-chips", type=Whole(), help="Only slices with at most this many chips."),
        click.option(
            "--usable",
            type=Number(),
            default=None,
            help="Fraction of nominal HBM usable by your program, for every generation. Default: "
            "each generation's usable HBM in tpuwizard's catalog (v5e 15.75 GiB per chip, "
            "measured; v6e 31.25 GiB and v4 30.75 GiB, from compile errors), else 0.94 of "
            "nominal, unconfirmed.",
        ),
        click.option(
            "--receipt",
            "receipt_file",
            type=click.Path(path_type=Path),
            help="A TPU receipt: its measured bytes_limit is the usable HBM for that generation "
            "(with --program too).",
        ),
        click.option(
            "--route",
            type=click.Choice(["vm", "spot", "flex", "on-demand"]),
            default="vm",
            show_default=True,
            help="Which price to show, by launch's route names: vm (on demand), spot, flex. "
            "on-demand is accepted for vm.",
        ),
    ],
    asked_slices,
)
program_options = option_group(
    "program",
    [
        click.option(
            "--program",
            type=click.Path(dir_okay=False),
            help="Your training program: compile its step for each slice (see examples/).",
        ),
        click.option(
            "--function",
            "function_name",
            default="tpuwizard_plan",
            show_default=True,
            help="With --program: the function that takes the mesh and returns (step, args).",
        ),
        click.option("--mesh", "mesh_axes", help="With --program: mesh axes, e.g. data=4,model=2."),
        click.option(
            "--method",
            type=click.Choice(["auto", "tpu-compile", "shapes-only"]),
            default="auto",
            show_default=True,
            help="With --program: compile with libtpu, or only count the state from the shapes.",
        ),
        click.option(
            "--jax",
            "worker_jax",
            metavar="VERSION",
            help="With --program: the worker's JAX from tpuwizard's table (default: its "
            "default), said beside the JAX that compiles (this computer's).",
        ),
        click.option(
            "--no-cache", is_flag=True, help="With --program: compile again, ignoring the cache."
        ),
        click.option(
            "--measure",
            is_flag=True,
            help="With --program, on a TPU VM: also run the step on the TPU at hand and show its "
            "measured peak HBM and step time beside the prediction (that slice's row only).",
        ),
        click.option(
            "--node",
            "node",
            help="With --program --measure: measure on this kept node (from `tpuwizard up`) "
            "through its run path, streamed and bounded by its deadline. A practice node's "
            "figures are its CPU's.",
        ),
        click.option(
            "--even-if-held",
            is_flag=True,
            help="With --node: measure even when a process tpuwizard did not start holds the "
            "node's TPU.",
        ),
    ],
    asked_program,
)
