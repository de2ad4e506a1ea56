"""The rules a plan must satisfy on its backend, before any cloud call (backend_problems).

Compute Engine's bounds are Google's (compute-engine.md, "One VM"): a max run duration of 30 s
to 120 days (Flex-start at most 7 days; tpuwizard's own bound is 7 days for every route), a
Flex-start queue wait of at most 2 hours, and no on-VM watchdog: the deadline is Google's.
A multi-host slice there is kept by no one: "When a VM in a MIG reaches its time limit, the MIG
deletes that VM instead of repairing it" (Compute Engine release notes, 2024-04-29), but the MIG,
its template and its workload policy stay until deleted (limit-vm-runtime-in-migs), and only a
running tpuwizard deletes them, so ``up`` and ``launch --keep`` refuse one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud.backends import BACKENDS, COMPUTE, TPU_API
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.parts import Where
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice

COMPUTE_MIN_RUN_MINUTES = 0.5  # maxRunDuration's 30 s
# Flex-start's requestValidForDuration: 2 h at most.
QUEUE_WAIT_MAX_MINUTES: dict[str, float] = {COMPUTE: 120.0}
DEFAULT_QUEUE_WAIT_MINUTES = 120.0


def backend_problems(
    where: Where,
    keep: bool,
    max_run: float,
    queue_wait_minutes: float | None,
    watchdog: bool,
) -> list[Said]:
    """Why ``where`` cannot be had on its backend, for a node kept or not (``keep``) for
    ``max_run`` minutes, waiting ``queue_wait_minutes`` for capacity, with a ``watchdog`` or
    not; empty when it can."""
    from tpuwizard.core.cloud import backend_choice

    if where.backend not in BACKENDS:
        return [f"Unknown backend '{where.backend}'. Choose one of: auto, {', '.join(BACKENDS)}."]
    found: list[Said] = []
    slice_ = where.slice
    try:
        backend_choice.choose_backend(slice_, where.route, where.backend, None)
    except BadInput as err:
        found.append(str(err))
    wait = queue_wait_minutes
    if wait is not None and where.route != Route.FLEX:
        found.append(
            f"--queue-wait is Flex-start's wait for capacity; the {where.route} route has none: "
            "leave it out, or use --route flex."
        )
    limit = QUEUE_WAIT_MAX_MINUTES.get(where.backend)
    if wait is not None and (wait < 0 or (limit is not None and wait > limit)):
        most = f"{limit:g}" if limit is not None else "any number of"
        found.append(
            f"The queue wait must be 0 to {most} minutes on this backend (Google's limit for "
            f"Flex-start is 2 hours), not {wait:g}."
        )
    if where.backend != COMPUTE:
        return found
    if keep and not slice_.single_host:
        found.append(_kept_slice_refused(slice_))
    if max_run < COMPUTE_MIN_RUN_MINUTES:
        found.append(
            "Compute Engine's max run duration is at least 30 seconds: give --max-run 0.5 or more."
        )
    if watchdog:
        found.append(
            phrase(
                "Compute Engine deletes the VM at its deadline itself (its max run duration): "
                "there is no on-VM watchdog on this backend. Leave it out: {0}.",
                Choice("watchdog", "off"),
            )
        )
    return found


def _kept_slice_refused(slice_: Slice) -> str:
    """Why a kept slice on Compute Engine is refused, and the two ways that are kept safely."""
    from tpuwizard.core.cloud import backend_choice

    gen = slice_.generation
    single = gen.name_for_chips(gen.single_host_max_chips)
    ways = [f"a single-host type (up to {single}), whose VM Compute Engine deletes at its deadline"]
    if TPU_API in backend_choice.support_for(slice_).backends:
        ways.append("--backend tpu-api, where the slice is one node and its watchdog deletes it")
    return (
        f"A kept {slice_.name} on Compute Engine would outlive its deadline: at its max run "
        "duration the MIG deletes its VMs, but the MIG, its template and its workload policy stay "
        "until deleted, and nothing but a running tpuwizard deletes them. Keep "
        + " or ".join(ways)
        + "; or launch it without --keep (tpuwizard deletes the whole slice at the end)."
    )


def queue_wait_seconds(where: Where, minutes: float | None) -> float | None:
    """How long a Flex-start request may wait for capacity, ``minutes`` asked (None: the
    default); None for the other routes."""
    if where.route != Route.FLEX:
        return None
    return (DEFAULT_QUEUE_WAIT_MINUTES if minutes is None else minutes) * 60.0
