"""Capacity planning: does a training state fit a slice's HBM?

Three answers per slice, because beginners mix them up:

* ``fits_sharded``: the state split evenly over every chip fits each chip's usable HBM;
* ``fits_replicated``: a full copy of the state fits one JAX device (data parallelism);
* ``fits_total``: the course's rule of thumb, total HBM >= state size.

Usable HBM per chip is the catalog's figure for the generation, each with its source (a real
chip's ``memory_stats()["bytes_limit"]``, or the limit a compiler refusal names); a generation
with none keeps nominal less a 6% reserve, marked unconfirmed. ``reserve`` (``--usable``) and a
receipt's measured figure override it. Activations are not included and often dominate.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog, cost

# Nominal HBM's share the runtime keeps where the catalog has no sourced usable figure; a
# reserve given explicitly (``--usable``) applies it to every generation instead.
DEFAULT_RESERVE = catalog.UNSOURCED_RESERVE

# Bytes per parameter for the whole training state, by recipe.
RECIPES: dict[str, tuple[float, str]] = {
    "adam-fp32": (16, "fp32 params, grads and two Adam moments"),
    "bf16-adam": (12, "bf16 params and grads, fp32 Adam moments"),
    "mixed-adam": (18, "bf16 params, fp32 master copy, fp32 grads, fp32 Adam moments"),
    "inference-bf16": (2, "bf16 weights only"),
    "inference-int8": (1, "int8 weights only"),
}

ACTIVATION_NOTE = (
    "Activations are not included and often dominate: without rematerialisation a transformer "
    "keeps roughly 2 x 20 x batch x seq_len x d_model x layers bytes in bf16; with block "
    "remat about 2 x batch x seq_len x d_model x layers."
)

# The generations a beginner should be steered to: sold today through the Cloud TPU API (v2, v3
# and v4 are older; tpu7x is reached through GKE or Compute Engine only).
CURRENT_GENERATIONS = ("v5e", "v5p", "v6e")

# Multi-host slices shown by default next to every single-host one.
COMMON_MULTI_HOST = ("v5litepod-16", "v6e-16", "v4-16", "v5p-16")

# Byte units a size may carry. An explicit unit is taken at its word, however large or small.
_UNITS = {
    "": 2**30,  # a bare number is GiB
    "g": 2**30,
    "gi": 2**30,
    "gib": 2**30,
    "gb": 1e9,
    "mi": 2**20,
    "mib": 2**20,
    "mb": 1e6,
    "ti": 2**40,
    "tib": 2**40,
    "tb": 1e12,
    "ki": 2**10,
    "kib": 2**10,
    "kb": 1e3,
}
# Suffixes of a parameter count (thousand, million, billion, trillion): "7B" typed where a size
# is asked for means seven billion parameters, never seven bytes.
_PARAM_SUFFIXES = ("k", "m", "b", "t")
# A bare number outside these bounds is almost surely not GiB: under 1 MiB no training state
# exists, and a million GiB or more is a parameter count typed without its suffix.
_BARE_MIN_GIB = 1 / 1024
_BARE_MAX_GIB = 1e6
# ASCII only: ``\d`` and ``float`` would take full-width digits ("４８GiB") as numbers.
# Compiled (and kept by re) on the first size that is not a bare whole number: see _size_parts.
_SIZE_PATTERN = r"^\s*([+-]?[0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([a-z]*)\s*$"
_ASCII_SPACE = " \t\n\r\f\v"  # what \s is under re.ASCII
# Compiled (and kept by re) on the first count asked for: fit's start is paid by every `fit 48`.
_PARAMS_PATTERN = r"^\s*([+-]?[0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([kmbt]?)\s*$"
_PARAM_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
SUGGESTED_RECIPE = "adam-fp32"


class LooksLikeParams(BadInput):
    """A size was asked for and a parameter count was typed.

    ``params`` is the text to use as a parameter count instead (``7B``); front ends offer to
    switch to the parameters question with it, the CLI prints the line to type.
    """

    def __init__(self, text: str, params: str, why: str) -> None:
        self.text, self.params = text, params
        super().__init__(
            f"'{text}' {why}, not a size in GiB. For a size, give a unit: 48GiB, 51.5GB, "
            "512MiB; for a model, give its parameters and a recipe instead."
        )

    @property
    def cli_line(self) -> str:
        """The command-line words to type instead."""
        return f"--params {self.params} --recipe {SUGGESTED_RECIPE}"


def parse_size_gib(text: str) -> float:
    """``48``, ``48GiB``, ``51.5GB``, ``12 GiB``, ``512MiB`` -> GiB. Bare numbers are GiB.

    What looks like a parameter count (``7B``, ``350M``, ``1.5K``, or a bare number under 1 MiB
    or of a million GiB and more) raises :class:`LooksLikeParams`.
    """
    parts = _size_parts(str(text))
    number, unit = parts if parts else ("", "")
    unit = unit.lower()
    if parts and unit in _PARAM_SUFFIXES:
        raise LooksLikeParams(text, f"{number}{unit.upper()}", "looks like a parameter count")
    if not parts or unit not in _UNITS:
        raise BadInput(
            f"'{text}' is not a size. Type a number of GiB such as 48, or a number with a "
            "unit: 48GiB, 51.5GB, 512MiB, 1.5TiB."
        )
    gib = float(number) * _UNITS[unit] / 2**30
    if not math.isfinite(gib):
        raise BadInput(f"'{text}' is too large: not a finite number. Type a size such as 48GiB.")
    if gib <= 0:
        raise BadInput(f"'{text}' must be a size above zero, such as 48 or 48GiB.")
    if not unit and gib < _BARE_MIN_GIB:
        raise BadInput(
            f"'{text}' GiB is under 1 MiB: no training state is that small. Type the size in "
            "GiB (48), with a unit (512MiB), or give the model's parameter count instead (7B)."
        )
    if not unit and gib >= _BARE_MAX_GIB:
        raise LooksLikeParams(text, number, "would be a million GiB or more")
    return gib


def _size_parts(text: str) -> tuple[str, str] | None:
    """A size's number and unit as typed, or None where ``text`` is none. A bare whole number
    (``48``, what most type) is read without the pattern: compiling it cost every ``fit``'s
    start 0.2 ms. It is what the pattern reads from such a text, so one rule decides both."""
    bare = text.strip(_ASCII_SPACE)
    if bare.isascii() and bare.isdigit():
        return bare, ""
    match = re.match(_SIZE_PATTERN, text, re.IGNORECASE | re.ASCII)
    return (match.group(1), match.group(2)) if match else None


def parse_params(text: str) -> float:
    """``7B``, ``350M``, ``1.5e9`` -> a parameter count."""
    match = re.match(_PARAMS_PATTERN, str(text), re.IGNORECASE | re.ASCII)
    if not match:
        raise BadInput(
            f"'{text}' is not a parameter count. Type one such as 7B, 350M, 1.5e9 or 125000000."
        )
    count = float(match.group(1)) * _PARAM_SCALE[match.group(2).lower()]
    if not math.isfinite(count):
        raise BadInput(f"'{text}' is too large: not a finite number. Type a count such as 7B.")
    if count <= 0:
        raise BadInput(f"'{text}' must be a parameter count above zero, such as 7B or 350M.")
    return count


def bytes_per_param(recipe: str) -> float:
    if recipe not in RECIPES:
        raise BadInput(f"Unknown recipe '{recipe}'. Choose one of: {', '.join(RECIPES)}.")
    return RECIPES[recipe][0]


def state_from_params(params: float, recipe: str) -> float:
    """GiB of training state for a parameter count and recipe."""
    return params * bytes_per_param(recipe) / 2**30


@dataclass(frozen=True)
class TrainingState:
    """A training state as a person gave it: its size, or a parameter count and a recipe."""

    gib: float
    bytes_per_param: float | None = None  # from a parameter count: its recipe's bytes each
    recipe: str | None = None  # from a parameter count: the recipe


def training_state(size: str | None, params: str | None, recipe: str) -> TrainingState:
    """The state of ``size`` (GiB, or with a unit), or else of ``params`` under ``recipe``. A
    size that reads as a parameter count raises :class:`LooksLikeParams`; an unknown recipe
    is said before a count that cannot be read."""
    if params is None:
        return TrainingState(parse_size_gib(size or ""))
    per_param = bytes_per_param(recipe)
    return TrainingState(state_from_params(parse_params(params), recipe), per_param, recipe)


@dataclass(frozen=True)
class SliceFit:
    """Whether a training state fits one slice, and what that slice holds and costs."""

    name: str
    chips: int
    vms: int  # the VMs you reach by SSH (the course calls them hosts)
    physical_hosts: int  # the machines under them: v5e and v6e pack two 4-chip VMs on one
    hbm_gib_per_chip: float
    total_hbm_gib: float
    usable_gib_per_chip: float
    fits_sharded: bool
    fits_replicated: bool
    fits_total: bool
    headroom_gib: float
    price_per_hour_usd: float | None
    single_host: bool
    slice: catalog.Slice = field(repr=False, compare=False)  # what it is, for rules over fits
    # The most an hour costs where the route has no figure (Flex-start: the on-demand price
    # Google discounts it from); else the price itself.
    price_at_most_usd: float | None = None
    # Where usable_gib_per_chip comes from: "catalog" (sourced), "unconfirmed" (nominal x 0.94),
    # "usable" (--usable) or "receipt" (a TPU receipt's bytes_limit).
    usable_from: str = "catalog"

    def to_dict(self) -> dict[str, object]:
        # "hosts" was physical_hosts's old name: kept, same value, for one release (README).
        said = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "slice"}
        return {**said, "hosts": self.physical_hosts}


def usable_gib_per_chip(
    gen: catalog.Generation, reserve: float | None = None, measured: float | None = None
) -> tuple[float, str]:
    """(usable GiB per chip, where from): a receipt's measured figure, else ``reserve`` taken
    from nominal where one is given (``--usable``), else the catalog's figure."""
    if measured is not None:
        return measured, "receipt"
    if reserve is not None:
        return gen.hbm_gib_per_chip * (1 - reserve), "usable"
    return gen.usable_gib_per_chip, "catalog" if gen.usable_confirmed else "unconfirmed"


def fit_slice(
    state_gib: float,
    slice_: catalog.Slice,
    reserve: float | None = None,
    route: str = "on-demand",
    measured_gib_per_chip: float | None = None,
) -> SliceFit:
    """Usable HBM is the generation's catalog figure; ``reserve`` (``--usable``) takes it from
    nominal instead, and ``measured_gib_per_chip``, from a TPU receipt's ``bytes_limit``,
    replaces both."""
    gen = slice_.generation
    usable_per_chip, usable_from = usable_gib_per_chip(gen, reserve, measured_gib_per_chip)
    # A replicated copy lives on every JAX device; on v2/v3 a device is one TensorCore with
    # half the chip's HBM.
    usable_per_device = usable_per_chip / gen.devices_per_chip
    per_chip_share = state_gib / slice_.chips
    price = cost.hourly(slice_, route)  # the session's catalog read where installed
    return SliceFit(
        name=slice_.name,
        chips=slice_.chips,
        vms=slice_.vms,
        physical_hosts=slice_.physical_hosts,
        hbm_gib_per_chip=gen.hbm_gib_per_chip,
        total_hbm_gib=slice_.hbm_gib_total,
        usable_gib_per_chip=round(usable_per_chip, 3),
        fits_sharded=per_chip_share <= usable_per_chip,
        fits_replicated=state_gib <= usable_per_device,
        fits_total=slice_.hbm_gib_total >= state_gib,
        headroom_gib=round(usable_per_chip - per_chip_share, 3),
        price_per_hour_usd=price,
        single_host=slice_.single_host,
        slice=slice_,
        price_at_most_usd=price if price is not None else cost.at_most_hourly(slice_, route),
        usable_from=usable_from,
    )


def default_slices() -> list[catalog.Slice]:
    """Every single-host slice and the common multi-host ones."""
    return [s for s in catalog.all_slices() if s.single_host or s.name in COMMON_MULTI_HOST]


def select_slices(
    named: list[catalog.Slice] | None = None,
    generations: list[str] | None = None,
    single_host: bool = False,
    max_chips: int | None = None,
) -> list[catalog.Slice]:
    """The slices to plan over (``named``, parsed where a person gave them, else the default
    ones), filtered; unknown generations raise :class:`BadInput`."""
    chosen = list(named) if named else default_slices()
    if generations:
        known = catalog.generations()
        aliases = {g.prefix: key for key, g in known.items()}
        keys = []
        for g in generations:
            key = g if g in known else aliases.get(g)
            if key is None:
                raise BadInput(f"Unknown generation '{g}'. Choose from: {', '.join(known)}.")
            keys.append(key)
        chosen = [s for s in chosen if s.generation.key in keys]
    if single_host:
        chosen = [s for s in chosen if s.single_host]
    if max_chips is not None:
        if max_chips < 1:
            raise BadInput("--max-chips must be 1 or more.")
        chosen = [s for s in chosen if s.chips <= max_chips]
    return chosen


def plan(
    state_gib: float,
    slices: list[catalog.Slice],
    reserve: float | None = None,
    route: str = "on-demand",
    measured: dict[str, float] | None = None,
) -> list[SliceFit]:
    """Fit ``state_gib`` over ``slices``, cheapest first (unknown prices last).

    ``reserve`` (None: each generation's catalog figure) and ``measured``, a generation key to
    usable GiB per chip read from a receipt, which those slices use instead.
    """
    if reserve is not None and not (0 <= reserve < 1):
        raise BadInput("The reserve must be a fraction from 0 up to (not including) 1.")
    measured = measured or {}
    fits = [fit_slice(state_gib, s, reserve, route, measured.get(s.generation.key)) for s in slices]
    return sorted(
        fits,
        key=lambda f: (f.price_at_most_usd is None, f.price_at_most_usd or 0.0, f.chips, f.name),
    )


def verdict(state_gib: float, fits: list[SliceFit]) -> str:
    """One line: the cheapest slice that fits sharded, or why none does."""
    best = cheapest_fitting(fits)
    if best is None:
        # which larger slice does is the hand-over's to say (handover/larger.py)
        return f"None of the slices above holds {gib_text(state_gib)} GiB sharded."
    price = (
        f" at about ${best.price_per_hour_usd:.2f}/h"
        if best.price_per_hour_usd is not None
        else f" at most ${best.price_at_most_usd:.2f}/h"
        if best.price_at_most_usd is not None
        else ""
    )
    host = "one VM" if best.single_host else f"{best.vms} VMs"
    return (
        f"{gib_text(state_gib)} GiB fits sharded on {best.name} ({best.chips} chips, {host})"
        f"{price}, leaving {spare_words(best)} for activations."
    )


def spare_words(f: SliceFit) -> str:
    """What each chip keeps: from its usable HBM, named, since the runtime holds some of the
    nominal back (the course's arithmetic, HBM less the state, gives a little more)."""
    return f"{gib_text(f.headroom_gib)} GiB per chip (of {f.usable_gib_per_chip:.2f} usable)"


def gib_text(gib: float, digits: int = 1) -> str:
    """A GiB figure for people: fixed digits, or three significant ones once it is huge."""
    return f"{gib:.{digits}f}" if abs(gib) < 1e6 else f"{gib:.3g}"


def cheapest_fitting(fits: list[SliceFit]) -> SliceFit | None:
    """The slice to suggest: the cheapest (``fits`` comes from :func:`plan`) that holds the state
    sharded, of a current generation with a known price when one fits, else of any."""
    sharded = [f for f in fits if f.fits_sharded]
    current = [
        f
        for f in sharded
        if f.price_at_most_usd is not None and f.slice.generation.key in CURRENT_GENERATIONS
    ]
    candidates = current or sharded
    return candidates[0] if candidates else None


def preselected(fits: list[SliceFit], chosen: str | None = None) -> SliceFit:
    """The row a slice question starts on (``fits`` from :func:`plan`, never empty): the slice
    ``chosen`` before, while it still holds the state; else the cheapest that does; else the
    one chosen before, or the first."""
    before = next((f for f in fits if f.name == chosen), None)
    if before is not None and before.fits_sharded:
        return before
    return cheapest_fitting(fits) or before or fits[0]


def slice_verdict(state_gib: float, f: SliceFit) -> str:
    """Whether ``f`` holds the state, and by how much it falls short when it does not."""
    if f.fits_sharded:
        # One line at 80 columns (Review keeps Create on an 80x24 screen).
        return (
            f"{gib_text(state_gib)} GiB fits sharded on {f.name}: {gib_text(f.headroom_gib)} GiB "
            f"spare per chip (of {f.usable_gib_per_chip:.2f} usable)."
        )
    need = state_gib / f.chips
    short_total = state_gib - f.usable_gib_per_chip * f.chips
    return (
        f"{gib_text(state_gib)} GiB does NOT fit {f.name}: split over {f.chips} chip"
        f"{'s' if f.chips != 1 else ''} each needs {gib_text(need)} GiB and has "
        f"{f.usable_gib_per_chip:.1f} usable, {gib_text(-f.headroom_gib)} GiB per chip short "
        f"({gib_text(short_total)} GiB in all)."
    )
