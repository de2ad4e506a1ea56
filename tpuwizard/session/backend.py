"""Which backend a launch or a kept node uses: decided once, here, for every front end.

``--backend`` (or the wizard's choice) is asked of the support matrix
(:func:`tpuwizard.core.cloud.backend_choice.choose_backend`) before any cloud call, so an
impossible pair is a bad input (exit 2) that names what to type. ``auto`` needs Compute Engine's
quota for v5p and v6e: the preflight stage reads it (session/prepare/stages.py); without
a reading (``--no-preflight``, or it could not be read) auto keeps those on the TPU API and says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.plan.catalog import Slice


def decide_backend(
    slice_: Slice,
    route: str,
    asked: str,
    compute_quota_chips: int | None = None,
    region: str | None = None,
) -> BackendChoice:
    """The backend for ``slice_`` on ``route``; raises BadInput for an impossible pair."""
    from tpuwizard.core.cloud import backend_choice

    return backend_choice.choose_backend(slice_, route, asked, compute_quota_chips, region)


def backend_notes(plan: LaunchPlan, nat_checked: bool = False) -> list[str]:
    """What the user should know before create about how this backend will treat the plan:
    said by every front end that creates (``launch``, ``up``). ``nat_checked``: the preflight
    looked for Cloud NAT (and said what it found)."""
    from tpuwizard.core.cloud.backends import COMPUTE
    from tpuwizard.core.cloud.compute.body import FLEX_MIN_WAIT_S
    from tpuwizard.core.cloud.diagnose.tpu7x_access import access_note

    if plan.backend != COMPUTE:
        return []
    notes = []
    if note := access_note(plan.slice):
        notes.append(f"{note}.")
    wait = plan.deadline.queue_wait_minutes
    if plan.route == Route.FLEX and wait is not None and wait * 60 < FLEX_MIN_WAIT_S:
        notes.append(
            f"Compute Engine waits at least {FLEX_MIN_WAIT_S} s for Flex-start capacity (a "
            f"shorter wait is refused, as users report): it gets {FLEX_MIN_WAIT_S} s."
        )
    if plan.reach.internal_ips and not nat_checked:
        notes.append(
            "Not checked: whether the subnet's region has Cloud NAT. Without it a VM with no "
            "external address cannot reach PyPI, and the bootstrap fails (the VM is then deleted)."
        )
    return notes
