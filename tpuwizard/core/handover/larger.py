"""When no slice ``fit`` listed holds a state: the smallest single slice that does, whether
``launch`` can make it, and the hand-over that runs it (or several of it) on GKE.

More slices (Multislice) are data-parallel copies, each holding the whole state: they add
throughput, never room, so the answer is always one larger slice.
"""

from __future__ import annotations

from tpuwizard.core.cloud.backend_choice import support_for
from tpuwizard.core.cloud.backends import COMPUTE, TPU_API
from tpuwizard.core.handover.gke import GKE_ACCELERATORS
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan import fit as fitting

_BACKEND_WORDS: dict[str, str] = {TPU_API: "the TPU API", COMPUTE: "Compute Engine"}
MULTISLICE_NOTE = (
    "More slices (Multislice, --slices N) add data-parallel copies, not room: each slice still "
    "holds the whole state."
)


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


def larger_slice_text(state_gib: float, reserve: float | None, route: str) -> str:
    """The words ``fit`` adds when no listed slice holds the state."""
    f = larger_slice(state_gib, reserve, route)
    if f is None:
        return (
            f"No single slice in tpuwizard's catalog holds {fitting.gib_text(state_gib)} GiB "
            f"sharded: choose a smaller recipe. {MULTISLICE_NOTE}"
        )
    backends = launch_backends(f.slice)
    launch = (
        f"tpuwizard launch can make it ({' or '.join(_BACKEND_WORDS[b] for b in backends)})"
        if backends
        else "tpuwizard launch cannot make it"
    )
    vms = "one VM" if f.vms == 1 else f"{f.vms} VMs"
    return (
        f"The smallest single slice that holds {fitting.gib_text(state_gib)} GiB sharded is "
        f"{f.name} ({f.chips} chips, {vms}), {_price(f)}; {launch}. To run it, or several of "
        f"it, on GKE: tpuwizard export --accelerator {f.name} (--slices N for several). "
        f"{MULTISLICE_NOTE}"
    )


def short_larger_text(state_gib: float, reserve: float | None, route: str) -> str:
    """The same in three lines at 80 columns, for the wizard's Capacity (its Next button stays
    on an 80x24 screen)."""
    gib = fitting.gib_text(state_gib)
    f = larger_slice(state_gib, reserve, route)
    if f is None:
        return f"No slice holds {gib} GiB sharded: choose a smaller recipe. {MULTISLICE_SHORT}"
    can = "launch can make it" if launch_backends(f.slice) else "launch cannot make it"
    vms = "one VM" if f.vms == 1 else f"{f.vms} VMs"
    return (
        f"No listed slice holds {gib} GiB. The smallest that does: {f.name} ({f.chips} chips, "
        f"{vms}, {_price(f)}; {can}); on GKE: tpuwizard export. {MULTISLICE_SHORT}"
    )


MULTISLICE_SHORT = "More slices add copies, not room."


def verdict_with_larger(
    state_gib: float,
    fits: list[fitting.SliceFit],
    reserve: float | None = None,
    route: str = "vm",
    short: bool = False,
) -> str:
    """``fit``'s verdict over ``fits``; where none of them holds the state, followed by which
    larger slice does and how to run it on GKE (``fit`` and plain mode; ``short``: in its place,
    the wizard's Capacity)."""
    verdict = fitting.verdict(state_gib, fits)
    if fitting.cheapest_fitting(fits) is not None:
        return verdict
    if short:
        return short_larger_text(state_gib, reserve, route)
    return f"{verdict}\n{larger_slice_text(state_gib, reserve, route)}"
