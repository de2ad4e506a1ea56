"""What a MIG reads back: its ``status`` (the slice's topology state included) and its managed
instances, from the MIG's record and its VMs' records.

Plain functions, so :mod:`tpuwizard.sandbox.compute.migs` keeps the behaviour and this the shape
(compute.v1.json's InstanceGroupManagerStatus and ManagedInstance). The topology's states are
compute.v1.json's: "ACTIVATING: The accelerator topology is being activated", "ACTIVE",
"ACTIVE_DEGRADED: ... active but operating in degraded mode", "INCOMPLETE: The configuration is
incomplete and the accelerator topology cannot be activated due to insufficient number of running
VMs". When each applies is the sandbox's reading of those words (docs/compute-engine-sandbox.md).
"""

from __future__ import annotations

from typing import Any

from tpuwizard.sandbox.compute.mig_parts import short_link
from tpuwizard.sandbox.compute.zone_operations import rfc3339

CREATING = ("PENDING", "PROVISIONING", "STAGING")


def slice_vms(topology: str, chips_per_vm: int) -> int:
    """How many VMs a topology such as "4x4" takes with ``chips_per_vm`` chips each."""
    chips = 1
    for side in topology.lower().split("x"):
        chips *= int(side) if side.isdigit() else 1
    return max(1, chips // max(1, chips_per_vm))


def topology_state(mig: dict[str, Any]) -> str | None:
    topologies = mig.get("status", {}).get("appliedAcceleratorTopologies") or []
    return topologies[0]["state"] if topologies else None


def _action(member: dict[str, Any], vm: dict[str, Any] | None) -> str:
    if vm is None:
        return "NONE" if member.get("failed") else "CREATING"
    if vm.get("_deletes"):
        return "DELETING"
    return "CREATING" if vm["status"] in CREATING else "NONE"


def refresh(mig: dict[str, Any], vms: list[dict[str, Any] | None], data: dict[str, Any]) -> None:
    """Set ``status`` and ``currentActions`` from the VMs as they are now."""
    actions = [_action(m, v) for m, v in zip(mig["_members"], vms, strict=True)]
    running = sum(1 for v in vms if v is not None and v["status"] == "RUNNING")
    failed = sum(1 for m, v in zip(mig["_members"], vms, strict=True) if _failed(m, v))
    summary = {a: 0 for a in ("abandoning", "creating", "deleting", "none", "recreating")}
    summary.update(
        creating=actions.count("CREATING"),
        deleting=actions.count("DELETING"),
        none=actions.count("NONE"),
    )
    mig["currentActions"] = summary
    status: dict[str, Any] = {
        "isStable": all(a == "NONE" for a in actions),
        "bulkInstanceOperation": {"inProgress": "CREATING" in actions},
    }
    if mig.get("_bulk_error"):
        status["bulkInstanceOperation"]["lastProgressCheck"] = {
            "timestamp": mig.get("_bulk_checked") or rfc3339(),
            "error": {"errors": [mig["_bulk_error"]]},
        }
    policy_link = mig["resourcePolicies"].get("workloadPolicy")
    project = mig["_name"].split("/")[1]
    policies = data.get("resource_policies", {})
    policy = policies.get(short_link(policy_link, project)) if policy_link else None
    if policy is not None:
        topology = policy["workloadPolicy"]["acceleratorTopology"]
        needed = slice_vms(topology, mig["_chips"])
        if mig.get("_was_active") and failed:
            state = "ACTIVE_DEGRADED"
        elif running >= needed and running == mig["targetSize"] and not failed:
            state = "ACTIVE"
            mig["_was_active"] = True
        elif "CREATING" in actions:
            state = "ACTIVATING"
        else:
            state = "INCOMPLETE"
        status["appliedAcceleratorTopologies"] = [{"acceleratorTopology": topology, "state": state}]
    mig["status"] = status


def _failed(member: dict[str, Any], vm: dict[str, Any] | None) -> bool:
    return bool(member.get("failed")) or (vm is not None and vm["status"] == "TERMINATED")


def managed(mig: dict[str, Any], vms: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """listManagedInstances: each member, in worker order, as ManagedInstance."""
    zone_url = mig["zone"]
    out = []
    for member, vm in zip(mig["_members"], vms, strict=True):
        item: dict[str, Any] = {
            "instance": f"{zone_url}/instances/{member['name']}",
            "name": member["name"],
            "currentAction": _action(member, vm),
            "targetStatus": "RUNNING",
        }
        if vm is not None:
            item.update(id=vm["id"], instanceStatus=vm["status"])
        if vm is None and mig.get("_bulk_error"):
            item["lastAttempt"] = {"errors": {"errors": [mig["_bulk_error"]]}}
        out.append(item)
    return out
