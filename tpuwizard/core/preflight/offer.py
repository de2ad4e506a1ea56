"""The accelerator type is offered in that zone by that backend (else the create is refused)."""

from __future__ import annotations

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.preflight.access import services_for
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, passed, unknown

NAME = "Offered in zone"


def check_offered(ask: PreflightAsk, reach: Reach) -> Check:
    """The backend's own list of the zone's types (TPU API accelerator types, Compute Engine
    machine types)."""
    if reach.rest is None:
        return unknown(NAME, "no credentials to list the zone's types with")
    where = "Compute Engine" if ask.backend == COMPUTE_BACKEND else "the TPU API"
    try:
        types = reach.offered()
    except Exception as err:
        from tpuwizard.core.cloud.diagnose import diagnose

        found = diagnose(err)
        fix = None
        if found.kind == "api_disabled":
            fix = f"gcloud services enable {services_for(ask.backend)[0]} --project {ask.project}"
        return unknown(
            NAME, f"{where}'s types in {ask.zone} could not be listed ({found.title})", fix
        )
    if ask.accelerator in types:
        return passed(NAME, f"{where} offers {ask.accelerator} in {ask.zone}")
    return failed(
        NAME,
        f"{where} does not offer {ask.accelerator} in {ask.zone}"
        + (
            f" (it offers {', '.join(sorted(types)[:6])})" if types else " (it offers no TPU there)"
        ),
        f"tpuwizard zones --accelerator {ask.accelerator} --backend {ask.backend}",
    )
