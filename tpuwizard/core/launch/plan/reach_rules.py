"""How the workers are reached (the transport, external addresses), as rules a plan must satisfy
before any cloud call (ReachFields.problems).

``gcloud compute tpus tpu-vm ssh`` reaches Cloud TPU API nodes only; a Compute Engine TPU VM is
an instance, reached by SSH. A TPU API node without external addresses is reached only through
IAP, which the gcloud transport tunnels through; a Compute Engine VM's internal address is
reached by SSH only from inside its network (google-behaviour.md, "External IPs are opt-in"),
and tpuwizard has no IAP transport for Compute Engine, so a plan with ``--internal-ips`` there
is refused before create: on Google it would be a billed create and delete for nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud.backends import COMPUTE

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice


class ReachFields(Protocol):
    """What these rules read of a plan (a :class:`LaunchPlan` has it all)."""

    @property
    def known_slice(self) -> Slice | None: ...

    @property
    def backend(self) -> str: ...

    @property
    def internal_ips(self) -> bool: ...

    @property
    def transport(self) -> str: ...


GCLOUD = "gcloud"
TRANSPORTS = ("ssh", GCLOUD)  # in practice "ssh" reaches the sandbox's workers as they are


def reach_problems(plan: ReachFields) -> list[Said]:
    """Why ``plan``'s workers could not be reached as it asks; empty when they can."""
    if plan.transport not in TRANSPORTS:
        return [f"Unknown transport '{plan.transport}'. Choose one of: {', '.join(TRANSPORTS)}."]
    if plan.transport == GCLOUD and plan.backend == COMPUTE:
        return [
            phrase(
                "The gcloud transport runs `gcloud compute tpus tpu-vm ssh`, which reaches TPU "
                "API nodes only; a Compute Engine TPU VM is reached by SSH: use {0}, or {1}.",
                Choice("transport", "ssh"),
                Choice("backend", "tpu-api"),
            )
        ]
    if plan.internal_ips and plan.backend == COMPUTE:
        return [_internal_on_compute(plan)]
    if plan.internal_ips and plan.transport != GCLOUD:
        return [
            phrase(
                "Without external addresses (internal IPs only) SSH from this computer cannot "
                "reach the VMs: add {0} (it tunnels through IAP).",
                Choice("transport", "gcloud"),
            )
        ]
    return []


def _internal_on_compute(plan: ReachFields) -> Said:
    """Internal addresses only on Compute Engine: nothing here reaches those VMs. The ways out
    name only what the plan then takes: the TPU API's IAP transport where it serves the type."""
    from tpuwizard.core.cloud import backend_choice
    from tpuwizard.core.cloud.backends import TPU_API

    why = (
        "Without external addresses nothing here reaches a Compute Engine TPU VM: tpuwizard "
        "reaches them by SSH to their external address (it has no IAP transport for Compute "
        "Engine), so the VM would be created, billed and deleted for nothing. "
    )
    slice_ = plan.known_slice
    served = slice_ is not None and TPU_API in backend_choice.support_for(slice_).backends
    if served:
        return phrase(
            why + "Ask for external addresses ({0}), or use {1} with {2} (IAP).",
            Choice("external_ips", "on"),
            Choice("backend", "tpu-api"),
            Choice("transport", "gcloud"),
        )
    return phrase(why + "Ask for external addresses ({0}).", Choice("external_ips", "on"))
