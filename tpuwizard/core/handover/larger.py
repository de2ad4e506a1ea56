"""When no slice ``fit`` listed holds a state: the smallest single slice that does and whether
``launch`` can make it; the hand-over to GKE only where no single slice does (or launch cannot).

More slices (Multislice) are data-parallel copies, each holding the whole state: they add
throughput, never room, so the answer is one larger slice wherever one exists.
"""

from __future__ import annotations

from tpuwizard.core.cloud.backend_choice import support_for
from tpuwizard.core.cloud.backends import COMPUTE, TPU_API
from tpuwizard.core.handover.gke import GKE_ACCELERATORS
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan import fit as fitting

_BACKEND_WORDS: dict[str, str] = {TPU_API: "the TPU API", COMPUTE: "Compute Engine"}


def larger_slice(
    state_gib: float, reserve: float | None = None, route: str = "vm"
) -> fitting.SliceFit | None:
    """The slice of fewest chips, of a generation GKE serves today (v4 aside: an older one),
    that holds ``state_gib`` sharded; the cheaper on a tie. None when none in the catalog does.
    ``reserve`` None: each generation's usable HBM from the catalog, as ``fit`` says it."""
    current = set(GKE_ACCELERATORS) - {"v4"}
    fits = [
        fitting.fit_slice(state_gib, s, reserve, route)
        for s in catalog.all_slices()
        if s.generation.key in current
    ]
    holding = [f for f in fits if f.fits_sharded]
    if not holding:
        return None
    return min(
        holding,
        key=lambda f: (f.chips, f.price_at_most_usd is None, f.price_at_most_usd or 0.0, f.name),
    )


def launch_backends(s: catalog.Slice) -> tuple[str, ...]:
    """The backends ``launch`` can make the slice ``s`` with (empty where none can)."""
    return tuple(
        b
        for b in support_for(s).backends
        if b != COMPUTE or s.single_host or s.one_vm.machine_type is not None
    )


def _price(f: fitting.SliceFit) -> str:
    if f.price_per_hour_usd is not None:
        return f"about ${f.price_per_hour_usd:.2f}/h"
    if f.price_at_most_usd is not None:
        return f"at most ${f.price_at_most_usd:.2f}/h"
    return "no price in tpuwizard's catalog"


NO_SLICE_HOLDS = (
    "make the state smaller (fewer parameters, or a leaner dtype or optimizer). More slices "
    "(Multislice) add data-parallel copies, not room, unless your program splits its model "
    "across them; tpuwizard export --slices N hands such a program to GKE."
)


def larger_slice_text(
    state_gib: float, reserve: float | None, route: str, listed: frozenset[str] = frozenset()
) -> str:
    """The words ``fit`` says when none of the slices it listed (``listed``) holds the state:
    the smallest single slice that does (said to be outside the table where it is) and how to
    make it; the hand-over to GKE only where no single slice does, or where launch cannot."""
    gib = fitting.gib_text(state_gib)
    f = larger_slice(state_gib, reserve, route)
    if f is None:
        return (
            f"No single slice in tpuwizard's catalog holds {gib} GiB, even sharded over every "
            f"chip: {NO_SLICE_HOLDS}"
        )
    backends = launch_backends(f.slice)
    make = (
        f"tpuwizard launch --accelerator {f.name} makes it "
        f"({' or '.join(_BACKEND_WORDS[b] for b in backends)})"
        if backends
        else f"tpuwizard launch cannot make it; tpuwizard export --accelerator {f.name} runs "
        "it on GKE"
    )
    vms = "one VM" if f.vms == 1 else f"{f.vms} VMs"
    where = "" if f.name in listed else ", not in the table above"
    return (
        f"None of the slices above holds {gib} GiB sharded. The smallest single slice that "
        f"does is {f.name} ({f.chips} chips, {vms}{where}), {_price(f)}; {make}."
    )


def short_larger_text(state_gib: float, reserve: float | None, route: str) -> str:
    """The same in three lines at 80 columns, for the wizard's Capacity (its Next button stays
    on an 80x24 screen)."""
    gib = fitting.gib_text(state_gib)
    f = larger_slice(state_gib, reserve, route)
    if f is None:
        return (
            f"No single slice holds {gib} GiB sharded: make the state smaller. More slices add "
            "copies, not room, unless your program splits its model across them (export)."
        )
    can = "launch can make it" if launch_backends(f.slice) else "only GKE: tpuwizard export"
    vms = "one VM" if f.vms == 1 else f"{f.vms} VMs"
    return (
        f"None of these holds {gib} GiB. The smallest single slice that does: {f.name} "
        f"({f.chips} chips, {vms}, {_price(f)}; {can})."
    )


def verdict_with_larger(
    state_gib: float,
    fits: list[fitting.SliceFit],
    reserve: float | None = None,
    route: str = "vm",
    short: bool = False,
) -> str:
    """``fit``'s one answer over ``fits``: the cheapest that holds the state; where none of them
    does, the smallest single slice that does and how to make it (``fit`` and plain mode;
    ``short``: in its place, the wizard's Capacity)."""
    if fitting.cheapest_fitting(fits) is not None:
        return fitting.verdict(state_gib, fits)
    if short:
        return short_larger_text(state_gib, reserve, route)
    return larger_slice_text(state_gib, reserve, route, frozenset(f.name for f in fits))
