"""What Compute Engine accepts in an insert of a TPU VM, and the instance it records.

Plain functions of an insert's body, each refusal in Compute Engine's words where the reference
has them (compute-engine.md, "ce:LINE"), else worded as Google's refusals of the same kind are
(``Invalid value for field '...': '...'. ...``), said so where it is the sandbox's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.google import project_number
from tpuwizard.sandbox.model import ApiError

NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
MODELS = ("STANDARD", "SPOT", "FLEX_START")
# What an insert's body may set on the instance; the rest of Instance is Google's to fill in.
KEPT = (
    "description",
    "labels",
    "metadata",
    "scheduling",
    "reservationAffinity",
    "serviceAccounts",
    "tags",
    "guestAccelerators",
    "shieldedInstanceConfig",
    "deletionProtection",
    "canIpForward",
)


@dataclass(frozen=True)
class CheckedInsert:
    name: str
    machine: ce.TpuMachineType
    model: str  # the provisioning model
    valid_for_s: float | None  # Flex-start's params.requestValidForDuration


def invalid(field: str, value: Any, why: str) -> ApiError:
    return ApiError(400, "invalid", f"Invalid value for field '{field}': '{value}'. {why}")


def zones() -> list[str]:
    """Every zone the catalog documents TPUs in, its AI zones too: Compute Engine knows them all
    (with or without TPU machine types); zones.list hides the AI zones unless they are visible
    (google.listed)."""
    return sorted({*catalog.documented_zone_table(), *catalog.documented_ai_zone_table()})


def require_zone(zone: str) -> None:
    if zone not in zones():
        raise invalid("zone", zone, "Unknown zone.")


def seconds(duration: Any, field: str) -> float:
    """A Compute Engine Duration ({seconds: "N", nanos: M}) in seconds."""
    if not isinstance(duration, dict):
        raise invalid(field, duration, "Expected a Duration with 'seconds'.")
    try:
        return int(duration.get("seconds", 0)) + int(duration.get("nanos", 0)) / 1e9
    except (TypeError, ValueError):
        raise invalid(f"{field}.seconds", duration.get("seconds"), "Not an integer.") from None


def machine_type_of(project: str, zone: str, link: Any) -> ce.TpuMachineType:
    """``machineType`` as a URL or partial URL (ce:29) -> a TPU machine type of this zone."""
    text = str(link or "")
    match = re.search(r"(?:^|/)zones/([^/]+)/machineTypes/([^/]+)$", text)
    name = match.group(2) if match else text
    if name.startswith(ce.REFUSED_PREFIXES):  # ce:14-16, Google's words
        raise ApiError(
            403, "forbidden", f"This user agent is not allowed to use the machine type [{name}]"
        )
    if match and match.group(1) != zone:
        raise invalid("resource.machineType", text, f"Must be in zone '{zone}'.")
    found = ce.machine_type(zone, name)
    if found is None:
        raise invalid(
            "resource.machineType",
            text,
            f"Machine type with name '{name}' does not exist in zone '{zone}'.",
        )
    return found


def check_scheduling(scheduling: dict[str, Any], model: str) -> None:
    """ce:37-46: TERMINATE on host maintenance; the run's bounds; the action it needs."""
    field = "resource.scheduling"
    if scheduling.get("onHostMaintenance") != "TERMINATE":  # ce:38 "required for TPU VMs"
        raise invalid(
            f"{field}.onHostMaintenance",
            scheduling.get("onHostMaintenance", "MIGRATE"),
            "Instances with TPU machine types do not support live migration: set "
            "onHostMaintenance to TERMINATE.",
        )
    if "maxRunDuration" in scheduling:
        run = seconds(scheduling["maxRunDuration"], f"{field}.maxRunDuration")
        if not ce.MIN_RUN_S <= run <= ce.MAX_RUN_S:  # ce:40-41
            raise invalid(
                f"{field}.maxRunDuration.seconds",
                scheduling["maxRunDuration"].get("seconds"),
                f"Must be between {ce.MIN_RUN_S} and {ce.MAX_RUN_S} seconds.",
            )
        if model == "FLEX_START" and run > ce.FLEX_MAX_RUN_S:  # ce:41-42
            raise invalid(
                f"{field}.maxRunDuration.seconds",
                scheduling["maxRunDuration"].get("seconds"),
                f"Flex-start VMs run at most {ce.FLEX_MAX_RUN_S} seconds (7 days).",
            )
    limited = "maxRunDuration" in scheduling or "terminationTime" in scheduling
    if limited and not scheduling.get("instanceTerminationAction"):
        raise invalid(
            f"{field}.instanceTerminationAction",
            "",
            "A time limit (maxRunDuration or terminationTime) needs an instanceTerminationAction.",
        )
    if model == "FLEX_START" and "maxRunDuration" not in scheduling:
        raise invalid(f"{field}.maxRunDuration", "", "Flex-start VMs need a maxRunDuration.")


def check_insert(project: str, zone: str, body: dict[str, Any]) -> CheckedInsert:
    """The insert's name, machine type and provisioning model, or Compute Engine's refusal."""
    require_zone(zone)
    name = str(body.get("name") or "")
    if not NAME_RE.fullmatch(name):
        raise invalid(
            "resource.name",
            name,
            "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'",
        )
    machine = machine_type_of(project, zone, body.get("machineType"))
    scheduling = body.get("scheduling") or {}
    model = scheduling.get("provisioningModel", "STANDARD")
    if model not in MODELS:
        raise invalid("resource.scheduling.provisioningModel", model, "Not offered for TPU VMs.")
    check_scheduling(scheduling, model)
    valid_for: float | None = None
    wait = (body.get("params") or {}).get("requestValidForDuration")
    if wait is not None:
        valid_for = seconds(wait, "resource.params.requestValidForDuration")
        if model != "FLEX_START":  # ce:44 "Relevant only for" Flex-start inserts
            valid_for = None
        elif not 0 <= valid_for <= ce.FLEX_MAX_WAIT_S:  # ce:45
            raise invalid(
                "resource.params.requestValidForDuration.seconds",
                wait.get("seconds"),
                f"Must be between 0 and {ce.FLEX_MAX_WAIT_S} seconds.",
            )
    affinity = (body.get("reservationAffinity") or {}).get("consumeReservationType")
    if model == "FLEX_START" and affinity != "NO_RESERVATION":  # ce:43
        raise invalid(
            "resource.reservationAffinity.consumeReservationType",
            affinity or "ANY_RESERVATION",
            "Flex-start VMs need NO_RESERVATION.",
        )
    if not body.get("disks"):
        raise invalid("resource.disks", "", "An instance needs a boot disk.")
    return CheckedInsert(name, machine, model, valid_for)


def instance_record(
    project: str, zone: str, body: dict[str, Any], checked: CheckedInsert, instance_id: str
) -> dict[str, Any]:
    """The Instance as Google reads it back (compute.v1.json's field names)."""
    zone_url = ce.zone_url(project, zone)
    self_link = f"{zone_url}/instances/{checked.name}"
    record = {k: v for k, v in body.items() if k in KEPT}
    scheduling = {
        "automaticRestart": False,
        "preemptible": False,
        "provisioningModel": checked.model,
        **(body.get("scheduling") or {}),
    }
    metadata = dict(body.get("metadata") or {})
    metadata.update(kind="compute#metadata", fingerprint="Xq1Qk2wjM5o=")
    accounts = [
        dict(a, email=_account(project, str(a.get("email", "default"))))
        for a in body.get("serviceAccounts") or []
    ]
    interfaces = body.get("networkInterfaces") or [{}]
    record.update(
        kind="compute#instance",
        id=instance_id,
        creationTimestamp=_now(),
        name=checked.name,
        zone=zone_url,
        machineType=f"{zone_url}/machineTypes/{checked.machine.name}",
        selfLink=self_link,
        scheduling=scheduling,
        metadata=metadata,
        labels=dict(body.get("labels") or {}),
        labelFingerprint="42WmSpB8rSM=",
        fingerprint="Zq5nGQ3pEzg=",
        networkInterfaces=[ce.network_interface(interfaces[0], ce.wants_external(body))],
        disks=[_disk(project, zone, checked.name, d, i) for i, d in enumerate(body["disks"])],
        cpuPlatform="AMD Genoa",
        startRestricted=False,
        deletionProtection=bool(body.get("deletionProtection", False)),
        canIpForward=bool(body.get("canIpForward", False)),
    )
    if accounts:
        record["serviceAccounts"] = accounts
    return record


def _account(project: str, email: str) -> str:
    """``default`` is the project's default compute service account (ce:48)."""
    return (
        f"{project_number(project)}-compute@developer.gserviceaccount.com"
        if email == "default"
        else email
    )


def _disk(project: str, zone: str, name: str, asked: dict[str, Any], index: int) -> dict[str, Any]:
    params = asked.get("initializeParams") or {}
    disk_name = str(params.get("diskName") or (name if index == 0 else f"{name}-{index}"))
    return {
        "kind": "compute#attachedDisk",
        "type": "PERSISTENT",
        "mode": "READ_WRITE",
        "source": f"{ce.zone_url(project, zone)}/disks/{disk_name}",
        "deviceName": str(asked.get("deviceName") or disk_name),
        "index": index,
        "boot": bool(asked.get("boot", index == 0)),
        "autoDelete": bool(asked.get("autoDelete", True)),
        "interface": "NVME",
        "diskSizeGb": str(params.get("diskSizeGb") or "10"),  # ce:32-33 the image's default
    }


def _now() -> str:
    from tpuwizard.sandbox.compute.zone_operations import rfc3339

    return rfc3339()


def termination_at(scheduling: dict[str, Any], running_at: float) -> float | None:
    """When Google ends the VM that entered RUNNING at ``running_at`` (ce:39-42)."""
    if "maxRunDuration" in scheduling:
        return running_at + seconds(scheduling["maxRunDuration"], "maxRunDuration")
    if "terminationTime" in scheduling:
        text = str(scheduling["terminationTime"]).replace("Z", "+00:00")
        return datetime.fromisoformat(text).timestamp()
    return None


def scheduling_refused(name: str, status: str) -> ApiError:
    """ce:52-54 Google's API reference: instances.setScheduling "can only [be called] on a stopped
    instance, that is, a VM instance that is in a `TERMINATED` state"."""
    return ApiError(
        400,
        "resourceNotReady",
        f"The instance '{name}' is {status}: setScheduling can only be called on a stopped "
        "instance, that is, a VM instance that is in a `TERMINATED` state.",
    )
