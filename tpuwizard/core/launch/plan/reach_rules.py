"""How the workers are reached (the transport, external addresses), as rules a plan must satisfy
before any cloud call: the Reach part's rules (parts.py).

``gcloud compute tpus tpu-vm ssh`` reaches Cloud TPU API nodes only; a Compute Engine TPU VM is
an instance, reached by SSH. A TPU API node without external addresses is reached only through
IAP, which the gcloud transport tunnels through; a Compute Engine VM's internal address is
reached by SSH only from inside its network (google-behaviour.md, "External IPs are opt-in"),
and tpuwizard has no IAP transport for Compute Engine, so a plan with ``--internal-ips`` there
is refused before create: on Google it would be a billed create and delete for nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud.backends import COMPUTE, Backend, Transport
from tpuwizard.core.errors import shown

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Reach
    from tpuwizard.core.plan.catalog import Slice

SERVICE_ACCOUNT_RE = re.compile(r"[a-z0-9][-a-z0-9_.+]*@[a-z0-9][-a-z0-9.]*\.[a-z]{2,}")


def account_problems(reach: Reach, project: str) -> list[Said]:
    """A node's service account must be an account's email (``project``: for the example)."""
    account = reach.service_account
    if account is None or SERVICE_ACCOUNT_RE.fullmatch(account):
        return []
    return [
        f"{shown(account)} is not a service account email: use one such as "
        f"NAME@{project or 'PROJECT'}.iam.gserviceaccount.com."
    ]


def reach_problems(reach: Reach, slice_: Slice | None, backend: Backend | str) -> list[Said]:
    """Why workers reached as ``reach`` asks could not be reached on ``backend``; empty when
    they can."""
    if reach.transport == Transport.GCLOUD and backend == COMPUTE:
        return [
            phrase(
                "The gcloud transport runs `gcloud compute tpus tpu-vm ssh`, which reaches TPU "
                "API nodes only; a Compute Engine TPU VM is reached by SSH: use {0}, or {1}.",
                Choice("transport", "ssh"),
                Choice("backend", "tpu-api"),
            )
        ]
    if reach.internal_ips and backend == COMPUTE:
        return [_internal_on_compute(slice_)]
    if reach.internal_ips and reach.transport != Transport.GCLOUD:
        return [
            phrase(
                "Without external addresses (internal IPs only) SSH from this computer cannot "
                "reach the VMs: add {0} (it tunnels through IAP).",
                Choice("transport", "gcloud"),
            )
        ]
    return []


def _internal_on_compute(slice_: Slice | None) -> Said:
    """Internal addresses only on Compute Engine: nothing here reaches those VMs. The ways out
    name only what the plan then takes: the TPU API's IAP transport where it serves the type."""
    from tpuwizard.core.cloud import backend_choice
    from tpuwizard.core.cloud.backends import TPU_API

    why = (
        "Without external addresses nothing here reaches a Compute Engine TPU VM: tpuwizard "
        "reaches them by SSH to their external address (it has no IAP transport for Compute "
        "Engine), so the VM would be created, billed and deleted for nothing. "
    )
    served = slice_ is not None and TPU_API in backend_choice.support_for(slice_).backends
    if served:
        return phrase(
            why + "Ask for external addresses ({0}), or use {1} with {2} (IAP).",
            Choice("external_ips", "on"),
            Choice("backend", "tpu-api"),
            Choice("transport", "gcloud"),
        )
    return phrase(why + "Ask for external addresses ({0}).", Choice("external_ips", "on"))
