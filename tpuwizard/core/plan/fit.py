"""Capacity planning: does a training state fit a slice's HBM?

Three answers per slice, because beginners mix them up:

* ``fits_sharded``: the state split evenly over every chip fits each chip's usable HBM;
* ``fits_replicated``: a full copy of the state fits one JAX device (data parallelism);
* ``fits_total``: the course's rule of thumb, total HBM >= state size.

Usable HBM is nominal HBM minus a reserve the runtime keeps (``memory_stats()["bytes_limit"]`` is
about 93-99% of nominal), 6% by default. Activations are not included and often dominate.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog

DEFAULT_RESERVE = 0.06

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

# Multi-host slices shown by default next to every single-host one.
COMMON_MULTI_HOST = ("v5litepod-16", "v6e-16", "v4-16", "v5p-16")

_UNITS = {
    "": 2**30,
    "g": 2**30,
    "gi": 2**30,
    "gib": 2**30,
    "gb": 1e9,
    "m": 2**20,
    "mi": 2**20,
    "mib": 2**20,
    "mb": 1e6,
    "t": 2**40,
    "ti": 2**40,
    "tib": 2**40,
    "tb": 1e12,
    "k": 2**10,
    "ki": 2**10,
    "kib": 2**10,
    "kb": 1e3,
    "b": 1,
}
_SIZE_RE = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_PARAMS_RE = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)
_PARAM_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_size_gib(text: str) -> float:
    """``48``, ``48GiB``, ``51.5GB``, ``12 GiB``, ``512MiB`` -> GiB. Bare numbers are GiB."""
    match = _SIZE_RE.match(str(text))
    if not match or match.group(2).lower() not in _UNITS:
        raise BadInput(
            f"'{text}' is not a size. Type a number of GiB such as 48, or a number with a "
            "unit: 48GiB, 51.5GB, 512MiB, 1.5TiB."
        )
    gib = float(match.group(1)) * _UNITS[match.group(2).lower()] / 2**30
    if not math.isfinite(gib) or gib <= 0:
        raise BadInput(f"'{text}' must be a size above zero, such as 48 or 48GiB.")
    return gib


def parse_params(text: str) -> float:
    """``7B``, ``350M``, ``1.5e9`` -> a parameter count."""
    match = _PARAMS_RE.match(str(text))
    if not match:
        raise BadInput(
            f"'{text}' is not a parameter count. Type one such as 7B, 350M, 1.5e9 or 125000000."
        )
    count = float(match.group(1)) * _PARAM_SCALE[match.group(2).lower()]
    if not math.isfinite(count) or count <= 0:
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
class SliceFit:
    name: str
    chips: int
    vms: int
    hosts: int
    hbm_gib_per_chip: float
    total_hbm_gib: float
    usable_gib_per_chip: float
    fits_sharded: bool
    fits_replicated: bool
    fits_total: bool
    headroom_gib: float
    price_per_hour_usd: float | None
    single_host: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def fit_slice(
    state_gib: float,
    slice_: catalog.Slice,
    reserve: float = DEFAULT_RESERVE,
    route: str = "on-demand",
    measured_gib_per_chip: float | None = None,
) -> SliceFit:
    """``measured_gib_per_chip``, from a TPU receipt's ``bytes_limit``, replaces the reserve."""
    gen = slice_.generation
    usable_per_chip = (
        measured_gib_per_chip
        if measured_gib_per_chip is not None
        else gen.hbm_gib_per_chip * (1 - reserve)
    )
    # A replicated copy lives on every JAX device; on v2/v3 a device is one TensorCore with
    # half the chip's HBM.
    usable_per_device = usable_per_chip / gen.devices_per_chip
    per_chip_share = state_gib / slice_.chips
    return SliceFit(
        name=slice_.name,
        chips=slice_.chips,
        vms=slice_.vms,
        hosts=slice_.physical_hosts,
        hbm_gib_per_chip=gen.hbm_gib_per_chip,
        total_hbm_gib=slice_.hbm_gib_total,
        usable_gib_per_chip=round(usable_per_chip, 3),
        fits_sharded=per_chip_share <= usable_per_chip,
        fits_replicated=state_gib <= usable_per_device,
        fits_total=slice_.hbm_gib_total >= state_gib,
        headroom_gib=round(usable_per_chip - per_chip_share, 3),
        price_per_hour_usd=slice_.price_per_hour(route),
        single_host=slice_.single_host,
    )


def default_slices() -> list[catalog.Slice]:
    """Every single-host slice and the common multi-host ones."""
    return [s for s in catalog.all_slices() if s.single_host or s.name in COMMON_MULTI_HOST]


def select_slices(
    names: list[str] | None = None,
    generations: list[str] | None = None,
    single_host: bool = False,
    max_chips: int | None = None,
) -> list[catalog.Slice]:
    """The slices to plan over, filtered; unknown names or generations raise :class:`BadInput`."""
    if names:
        chosen = []
        for name in names:
            try:
                chosen.append(catalog.parse_accelerator(name))
            except catalog.UnknownAcceleratorError as err:
                raise BadInput(str(err)) from None
    else:
        chosen = default_slices()
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
    reserve: float = DEFAULT_RESERVE,
    route: str = "on-demand",
    measured: dict[str, float] | None = None,
) -> list[SliceFit]:
    """Fit ``state_gib`` over ``slices``, cheapest first (unknown prices last).

    ``measured`` maps a generation key to usable GiB per chip read from a receipt; those
    slices use it instead of ``reserve``.
    """
    if not (0 <= reserve < 1):
        raise BadInput("The reserve must be a fraction from 0 up to (not including) 1.")
    measured = measured or {}
    fits = [fit_slice(state_gib, s, reserve, route, measured.get(s.generation.key)) for s in slices]
    return sorted(
        fits,
        key=lambda f: (f.price_per_hour_usd is None, f.price_per_hour_usd or 0.0, f.chips, f.name),
    )


def verdict(state_gib: float, fits: list[SliceFit]) -> str:
    """One line: the cheapest slice that fits sharded, or why none does."""
    sharded = [f for f in fits if f.fits_sharded]
    if not sharded:
        return (
            f"No listed slice holds {state_gib:.1f} GiB, even sharded over every chip: "
            "try a larger slice (--max-chips, --slices) or a smaller recipe."
        )
    best = sharded[0]
    price = (
        f" at about ${best.price_per_hour_usd:.2f}/h" if best.price_per_hour_usd is not None else ""
    )
    host = "one VM" if best.single_host else f"{best.vms} VMs"
    return (
        f"{state_gib:.1f} GiB fits sharded on {best.name} ({best.chips} chips, {host})"
        f"{price}, leaving {best.headroom_gib:.1f} GiB per chip for activations."
    )
