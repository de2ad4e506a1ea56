"""The body of a Compute Engine TPU VM create, as JSON (compute.v1.json's ``Instance``), and the
machine types that carry TPUs. Plain data in, plain data out: the conformance test checks the
body against Google's discovery document, and nothing here imports Google's client.

Facts and field names: compute-engine.md ("One VM (single host)").
"""

from __future__ import annotations

from typing import Any

from tpuwizard.core.cloud.types import CLOUD_PLATFORM_SCOPE, NodeRequest
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import Route

# (generation, chips on the VM) -> machine type (compute-engine.md, "Why it matters"; Google's
# tpu-machines page). v5e has none: Compute Engine refuses its ct5lp types with a 403.
MACHINE_TYPES: dict[tuple[str, int], str] = {
    ("v6e", 1): "ct6e-standard-1t",
    ("v6e", 4): "ct6e-standard-4t",
    ("v6e", 8): "ct6e-standard-8t",
    ("v5p", 4): "ct5p-hightpu-4t",
    ("tpu7x", 4): "tpu7x-standard-4t",
}
_ACCELERATOR_OF = {machine: key for key, machine in MACHINE_TYPES.items()}

# Boot disk types each generation takes (tpu/docs/setup-persistent-disk: v6e Hyperdisk
# Balanced only, v5p Balanced Persistent Disk; TPU7x assumed as v6e, the newer machine series).
DISK_TYPES = {"v6e": "hyperdisk-balanced", "v5p": "pd-balanced", "tpu7x": "hyperdisk-balanced"}
# The image's own disk is small (10 GB, report) and the venv with jax[tpu] and libtpu, uv's
# cache and a uv-managed Python take several GB more. 100 GB is what a TPU API VM's boot disk has
# (setup-persistent-disk: "A TPU VM includes a 100 GiB boot disk"), so a script that fits there
# fits here; at Balanced disk prices it is cents a day beside the TPU's dollars an hour.
BOOT_DISK_GB = 100

# maxRunDuration bounds (limit-vm-runtime): 30 s to 120 days; Flex-start runs at most 7 days.
MIN_RUN_S, MAX_RUN_S, FLEX_MAX_RUN_S = 30, 120 * 86400, 7 * 86400
# Flex-start's wait for capacity: at most 2 h (GA announcement); Google refuses under 90 s
# ("must be at least 90 and less or equal to 7200 seconds", a report), so a shorter wish
# (0: only if there is capacity now) is sent as 90 s.
FLEX_MIN_WAIT_S, FLEX_MAX_WAIT_S = 90, 7200
PROVISIONING_MODELS = {"vm": "STANDARD", "spot": "SPOT", "flex": "FLEX_START"}


def machine_type(slice_: catalog.Slice) -> str:
    """The machine type of a single-host slice; BadInput where Compute Engine has none."""
    accelerator = slice_.name
    key = (slice_.generation.key, slice_.chips)
    if key in MACHINE_TYPES:
        return MACHINE_TYPES[key]
    offered = sorted(
        slice_.generation.name_for_chips(chips)
        for gen, chips in MACHINE_TYPES
        if gen == slice_.generation.key
    )
    if offered:
        raise BadInput(
            f"{accelerator} has no Compute Engine machine type here (single-host VMs only): "
            f"choose {', '.join(offered)}, or --backend tpu-api."
        )
    raise BadInput(
        f"Compute Engine serves no {slice_.generation.key} machine type (it serves v6e, v5p and "
        f"TPU7x): use --backend tpu-api for {accelerator}."
    )


def accelerator_of(machine: str) -> str | None:
    """The accelerator type a machine type (a name or a URL ending in one) carries, or None."""
    key = _ACCELERATOR_OF.get(machine.rsplit("/", 1)[-1])
    if key is None:
        return None
    return catalog.generations()[key[0]].name_for_chips(key[1])


def queue_wait_seconds(wanted: float | None) -> int:
    """``params.requestValidForDuration`` for a Flex-start wish (None: the longest, 2 h)."""
    if wanted is None:
        return FLEX_MAX_WAIT_S
    if wanted > FLEX_MAX_WAIT_S:
        raise BadInput(
            f"Flex-start on Compute Engine waits at most {FLEX_MAX_WAIT_S // 60} minutes for "
            f"capacity; {wanted / 60:.0f} were asked for: choose --queue-wait 120 or less."
        )
    return max(FLEX_MIN_WAIT_S, int(wanted))


def _max_run_seconds(req: NodeRequest) -> int:
    """Every create carries a deadline Google enforces: never send one without it."""
    most = FLEX_MAX_RUN_S if req.route == Route.FLEX else MAX_RUN_S
    seconds = req.max_run_s
    if seconds is None or not MIN_RUN_S <= seconds <= most:
        raise BadInput(
            f"A Compute Engine TPU VM needs a maximum run between {MIN_RUN_S} s and "
            f"{most // 86400} days (--max-run); got {seconds if seconds is not None else 'none'}."
        )
    return seconds


def instance_body(req: NodeRequest) -> dict[str, Any]:
    """The ``Instance`` JSON for ``req``: see compute-engine.md for every field."""
    if req.route not in PROVISIONING_MODELS:
        raise BadInput(f"Unknown route {req.route!r}: choose vm, spot or flex.")
    generation = req.slice.generation.key
    machine = machine_type(req.slice)
    zone = req.zone
    scheduling: dict[str, Any] = {
        "provisioningModel": PROVISIONING_MODELS[req.route],
        "onHostMaintenance": "TERMINATE",  # required for TPU VMs
        "automaticRestart": False,
        # DELETE, never STOP: a stopped VM keeps its disk billing and loses its deadline.
        "instanceTerminationAction": "DELETE",
        "maxRunDuration": {"seconds": str(_max_run_seconds(req))},
    }
    interface: dict[str, Any] = {}
    if req.external_ips:  # as gcloud: an external address unless --internal-ips
        interface["accessConfigs"] = [{"type": "ONE_TO_ONE_NAT", "name": "external-nat"}]
    body: dict[str, Any] = {
        "name": req.node_id,
        "machineType": f"zones/{zone}/machineTypes/{machine}",
        "disks": [
            {
                "boot": True,
                "autoDelete": True,  # the disk goes with the VM: nothing left billing
                "initializeParams": {
                    # Google's accelerator image family (catalog.toml, with its sources).
                    "sourceImage": catalog.image_source(req.slice.generation),
                    "diskSizeGb": str(BOOT_DISK_GB),
                    "diskType": f"zones/{zone}/diskTypes/{DISK_TYPES[generation]}",
                },
            }
        ],
        "networkInterfaces": [interface],
        "scheduling": scheduling,
        "labels": dict(req.labels),
        # The TPU side's metadata map as Compute's items: ssh-keys is "user:ssh-ed25519 ...".
        "metadata": {"items": [{"key": k, "value": v} for k, v in sorted(req.metadata.items())]},
        # cloud-platform scope: what the VM may do is then its account's IAM roles alone.
        "serviceAccounts": [
            {"email": req.service_account or "default", "scopes": [CLOUD_PLATFORM_SCOPE]}
        ],
    }
    if req.route == Route.FLEX:
        body["reservationAffinity"] = {"consumeReservationType": "NO_RESERVATION"}
        body["params"] = {
            "requestValidForDuration": {"seconds": str(queue_wait_seconds(req.queue_wait_s))}
        }
    return body
