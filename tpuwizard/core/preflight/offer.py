"""The accelerator type is offered in that zone by that backend (else the create is refused)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.preflight.access import services_for
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, passed, unknown
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice

NAME = "Offered in zone"


def check_offered(ask: PreflightAsk, reach: Reach) -> Check:
    """The backend's own list of the zone's types (TPU API accelerator types, Compute Engine
    machine types)."""
    where = "Compute Engine" if ask.backend == COMPUTE_BACKEND else "the TPU API"
    flex = _no_flex(ask, where)
    if flex is not None:  # the launch's own rule (google_errors.flex_zones), said the same way
        return flex
    if reach.rest is None:
        return unknown(NAME, "no credentials to list the zone's types with")
    try:
        types = reach.offered()
    except Exception as err:
        from tpuwizard.core.cloud.diagnose.failure import diagnose

        found = diagnose(err)
        fix = None
        if found.kind == "api_disabled":
            fix = f"gcloud services enable {services_for(ask.backend)[0]} --project {ask.project}"
        return unknown(
            NAME, f"{where}'s types in {ask.zone} could not be listed ({found.title})", fix
        )
    if ask.accelerator in types:
        return passed(NAME, f"{where} offers {ask.accelerator} in {ask.zone}")
    vm = _one_vm(ask.known_slice) if ask.backend == COMPUTE_BACKEND else None
    if vm is not None and vm in types:  # a multi-host slice is a MIG of such VMs
        return passed(
            NAME, f"{where} offers {vm} VMs in {ask.zone}, of which {ask.accelerator} is a MIG"
        )
    return failed(
        NAME,
        f"{where} does not offer {ask.accelerator} in {ask.zone}"
        + (
            f" (it offers {', '.join(sorted(types)[:6])})" if types else " (it offers no TPU there)"
        ),
        f"tpuwizard zones --accelerator {ask.accelerator} --backend {ask.backend}",
    )


def _no_flex(ask: PreflightAsk, where: str) -> Check | None:
    """Flex-start asked for in a zone where this backend has none for the type: a FAIL."""
    from tpuwizard.core.cloud.google_errors import flex_zones

    if ask.route != Route.FLEX or not ask.accelerator or not ask.zone:
        return None
    zones = flex_zones(ask.known_slice, ask.backend)
    if ask.zone in zones:
        return None
    offered = f"only in {', '.join(zones)}" if zones else "in no zone"
    return failed(
        NAME,
        f"{where} offers Flex-start for {ask.accelerator} {offered}, not in {ask.zone}",
        # --route flex: the listing of the zones that take Flex-start, not every zone.
        f"tpuwizard zones --accelerator {ask.accelerator} --backend {ask.backend} --route flex",
    )


def _one_vm(s: Slice | None) -> str | None:
    """The single-VM slice a multi-host slice is made of (v6e-16 -> v6e-4), else None."""
    if s is None:
        return None
    return None if s.single_host else s.generation.name_for_chips(s.chips_per_vm)
