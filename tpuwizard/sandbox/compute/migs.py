"""Zonal managed instance groups (MIGs) of TPU VMs: a multi-host slice on Compute Engine.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file, the operations,
the instances, the regional parts (:mod:`tpuwizard.sandbox.compute.mig_parts`), the VMs and the
faults.
MIGs live in ``store.data["migs"]`` keyed ``projects/P/zones/Z/instanceGroupManagers/NAME``; their
VMs are ordinary instances (``store.data["instances"]``, with ``_mig`` and ``_index``), booted as
the single-host ones are, each with its own home and a distinct ``networkIP``. A slice's workers
are its VMs in name order, as the client orders a slice's endpoints (compute/slices.py): the
names are all both sides read, so worker i is the same VM to each (``_index`` is the MIG's own
bookkeeping of which name to make next). Rules cite ``reference/compute-engine.md``
("ce:LINE"), compute.v1.json, or Google's text quoted in docs/compute-engine-sandbox.md.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute import instance_rules, mig_status
from tpuwizard.sandbox.compute.instances import Instances
from tpuwizard.sandbox.compute.mig_parts import SliceParts, check_name, short_link, unknown_fields
from tpuwizard.sandbox.compute.zone_operations import ZoneOperations, rfc3339
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.google import internal_address
from tpuwizard.sandbox.model import ApiError, public
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.vms import VirtualMachines

MIG_FIELDS = (
    "name",
    "description",
    "baseInstanceName",
    "instanceTemplate",
    "targetSize",
    "targetSizePolicy",
    "instanceLifecyclePolicy",
    "resourcePolicies",
    "listManagedInstancesResults",
)
# Output-only in compute.v1.json (InstanceGroupManager.zone: "readOnly"), yet gcloud 528 always
# sends the zone's name in its insert, and Google serves it: accepted; the path's zone is read back.
OUTPUT_ONLY_SENT = ("zone",)


def not_found(key: str) -> ApiError:
    return ApiError(404, "notFound", f"The resource '{key}' was not found")


class ManagedInstanceGroups:
    """The MIGs in ``store.data["migs"]``, their VMs, and what time does to them."""

    def __init__(
        self,
        store: StateStore,
        operations: ZoneOperations,
        instances: Instances,
        parts: SliceParts,
        vms: VirtualMachines,
        faults: Faults,
    ) -> None:
        self.store = store
        self.operations = operations
        self.instances = instances
        self.parts = parts
        self.vms = vms
        self.faults = faults

    @property
    def records(self) -> dict[str, Any]:
        return self.store.data.get("migs", {})

    def record(self, project: str, zone: str, name: str) -> dict[str, Any]:
        instance_rules.require_zone(zone)
        key = f"projects/{project}/zones/{zone}/instanceGroupManagers/{name}"
        if key not in self.records:
            raise not_found(key)
        return self.records[key]

    def get(self, project: str, zone: str, name: str) -> dict[str, Any]:
        return public(self.record(project, zone, name))

    def in_zone(self, project: str, zone: str) -> list[dict[str, Any]]:
        instance_rules.require_zone(zone)
        prefix = f"projects/{project}/zones/{zone}/instanceGroupManagers/"
        return [public(r) for k, r in sorted(self.records.items()) if k.startswith(prefix)]

    def instance_group(self, mig: dict[str, Any]) -> dict[str, Any]:
        """The MIG's instance group (its ``instanceGroup`` URL), as compute.v1.json's
        InstanceGroup: ``size`` is how many of its VMs exist."""
        found = self.records[short_link(mig["selfLink"], "")]
        return {
            "kind": "compute#instanceGroup",
            "id": mig["id"],
            "creationTimestamp": mig["creationTimestamp"],
            "name": mig["name"],
            "zone": mig["zone"],
            "size": sum(1 for vm in self._vm_records(found) if vm is not None),
            "fingerprint": "42WmSpB8rSM=",
            "selfLink": mig["instanceGroup"],
        }

    # --- insert ------------------------------------------------------------------------------

    def insert(self, project: str, zone: str, body: dict[str, Any]) -> dict[str, Any]:
        instance_rules.require_zone(zone)
        unknown_fields(body, (*MIG_FIELDS, *OUTPUT_ONLY_SENT), "resource")
        name = check_name(body.get("name"))
        key = f"projects/{project}/zones/{zone}/instanceGroupManagers/{name}"
        if key in self.records:
            raise ApiError(409, "alreadyExists", f"The resource '{key}' already exists")
        template = self.parts.template_by_link(body.get("instanceTemplate"), project)
        if template is None:
            raise instance_rules.invalid(
                "resource.instanceTemplate",
                body.get("instanceTemplate", ""),
                "The instance template does not exist.",
            )
        regional = template["_name"].split("/")[2] == "regions"  # else a global template
        if regional and template["_name"].split("/")[3] != ce.region_of(zone):
            raise instance_rules.invalid(
                "resource.instanceTemplate",
                body["instanceTemplate"],
                f"A regional instance template must be in the MIG's region {ce.region_of(zone)}.",
            )
        machine = instance_rules.machine_type_of(
            project, zone, template["properties"]["machineType"]
        )
        policy_link = (body.get("resourcePolicies") or {}).get("workloadPolicy")
        policy = self.parts.policy_by_link(policy_link, project) if policy_link else None
        if policy_link and policy is None:
            raise instance_rules.invalid(
                "resource.resourcePolicies.workloadPolicy",
                policy_link,
                "The resource policy does not exist.",
            )
        self._refuse_placement(project, machine, template)
        size = int(body.get("targetSize") or 0)
        self.store.data["counter"] += 1
        mig_id = str(ce.ID_BASE + self.store.data["counter"])
        zone_url = ce.zone_url(project, zone)
        record: dict[str, Any] = {k: body[k] for k in MIG_FIELDS if k in body}
        record.update(
            kind="compute#instanceGroupManager",
            id=mig_id,
            creationTimestamp=rfc3339(),
            zone=zone_url,
            selfLink=f"{zone_url}/instanceGroupManagers/{name}",
            instanceGroup=f"{zone_url}/instanceGroups/{name}",
            baseInstanceName=str(body.get("baseInstanceName") or name),
            targetSize=0,
            targetSizePolicy=body.get("targetSizePolicy") or {"mode": "INDIVIDUAL"},
            instanceLifecyclePolicy=body.get("instanceLifecyclePolicy")
            or {"defaultActionOnFailure": "REPAIR"},
            instanceTemplate=template["selfLink"],
            resourcePolicies={"workloadPolicy": policy["selfLink"]} if policy else {},
            fingerprint="9Nc8iPqFl4E=",
            _name=key,
            _members=[],
            _chips=machine.chips,
        )
        self.store.data.setdefault("migs", {})[key] = record
        self.set_size(record, size)
        op = self.operations.start(project, zone, "insert", key, mig_id)
        self.operations.finish(op)
        mig_status.refresh(record, self._vm_records(record), self.store.data)
        self.store.save()
        return public(op)

    def _refuse_placement(
        self, project: str, machine: ce.TpuMachineType, template: dict[str, Any]
    ) -> None:
        """ce:81-82 (report): a MIG of tpu7x with a placement policy is refused, "Use workload
        policy instead" (the words around them are the sandbox's)."""
        if machine.generation != "tpu7x":
            return
        for link in template["properties"].get("resourcePolicies") or []:
            policy = self.parts.policy_by_link(link, project)
            if policy is not None and "groupPlacementPolicy" in policy:
                raise ApiError(
                    400,
                    "invalid",
                    f"Placement policy '{policy['name']}' is not supported for machine type "
                    f"{machine.name}. Use workload policy instead.",
                )

    # --- resize, delete, resize requests -----------------------------------------------------

    def resize(self, project: str, zone: str, name: str, size: Any) -> dict[str, Any]:
        found = self.record(project, zone, name)
        try:
            wanted = int(size)
        except (TypeError, ValueError):
            raise instance_rules.invalid("size", size, "Must be a whole number.") from None
        if wanted < 0:
            raise instance_rules.invalid("size", size, "Must be 0 or more.")
        self.set_size(found, wanted)
        # compute.v1.json instanceGroupManagers.resize: "The resize operation is marked DONE when
        # the resize actions are scheduled even if the group has not yet added or deleted any
        # instances. You must separately verify the status ... with the listmanagedinstances
        # method." So a stockout does not end it with an error: the MIG waits (BULK).
        kind = "compute.instanceGroupManagers.resize"
        op = self.operations.start(project, zone, kind, found["_name"], found["id"])
        self.operations.finish(op)
        self.advance(found)
        self.store.save()
        return public(op)

    def set_size(self, mig: dict[str, Any], size: int) -> None:
        members = mig["_members"]
        while len(members) > size:  # "If you decrease the size, the group deletes instances"
            gone = members.pop()
            self.delete_vm(mig, gone["name"])
        used = {m["index"] for m in members}
        while len(members) < size:
            index = min(i for i in range(size + 1) if i not in used)
            used.add(index)
            suffix = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in "abcd")
            members.append({"name": f"{mig['baseInstanceName']}-{suffix}", "index": index})
        members.sort(key=lambda m: m["index"])
        mig["targetSize"] = size

    def delete_vm(self, mig: dict[str, Any], name: str) -> None:
        project, zone = mig["_name"].split("/")[1], mig["_name"].split("/")[3]
        if f"projects/{project}/zones/{zone}/instances/{name}" in self.instances.records:
            self.instances.delete(project, zone, name, faulty=False)

    def delete(self, project: str, zone: str, name: str) -> dict[str, Any]:
        """compute.v1.json: "Deletes the specified managed instance group and all of the
        instances in that group." The operation is DONE when the last VM is gone."""
        found = self.record(project, zone, name)
        op = self.operations.start(project, zone, "delete", found["_name"], found["id"])
        if not found.get("_deleting"):
            found["_deleting"] = op["selfLink"]
            for member in found["_members"]:
                self.delete_vm(found, member["name"])
        else:
            self.operations.finish(op)
        self.advance(found)
        self.store.save()
        return public(op)

    # --- reads of the VMs --------------------------------------------------------------------

    def vm_key(self, mig: dict[str, Any], name: str) -> str:
        project, zone = mig["_name"].split("/")[1], mig["_name"].split("/")[3]
        return f"projects/{project}/zones/{zone}/instances/{name}"

    def _vm_records(self, mig: dict[str, Any]) -> list[dict[str, Any] | None]:
        return [self.instances.records.get(self.vm_key(mig, m["name"])) for m in mig["_members"]]

    def _workers(self, mig: dict[str, Any]) -> list[dict[str, Any] | None]:
        """The VMs in worker order: by name, as the client orders the slice's endpoints."""
        by_name = sorted(mig["_members"], key=lambda m: str(m["name"]))
        return [self.instances.records.get(self.vm_key(mig, m["name"])) for m in by_name]

    def managed_instances(self, project: str, zone: str, name: str) -> dict[str, Any]:
        found = self.record(project, zone, name)
        return {"managedInstances": mig_status.managed(found, self._vm_records(found))}

    def worker_homes(self, project: str, zone: str, name: str) -> list[str]:
        """Where the slice's workers live, in worker order: once every VM is RUNNING."""
        found = self.records.get(f"projects/{project}/zones/{zone}/instanceGroupManagers/{name}")
        vms = self._workers(found) if found is not None else []
        if not vms or any(v is None or v["status"] != "RUNNING" for v in vms):
            raise ApiError(404, "notFound", f"MIG '{name}' was not found or not all RUNNING.")
        return [str(self.vms.instance_folder(v["_name"]) / "w0") for v in vms if v is not None]

    # --- the clock ---------------------------------------------------------------------------

    def advance_all(self, t: float) -> bool:
        """The MIGs react to what happened to their VMs this tick, then create what is missing."""
        changed = bool(self.instances.removed)
        removed, self.instances.removed[:] = list(self.instances.removed), []
        for record, why in removed:
            mig = self.records.get(record.get("_mig", ""))
            if mig is not None and not mig.get("_deleting"):
                self._lost(mig, record, why)
        for mig in list(self.records.values()):
            before = repr(mig.get("status"))
            changed |= self.advance(mig) or before != repr(mig.get("status"))
        return changed

    def _lost(self, mig: dict[str, Any], record: dict[str, Any], why: str) -> None:
        member = next((m for m in mig["_members"] if m["name"] == record["name"]), None)
        if member is None:
            return
        if why == "time_limit":
            # Google's Compute Engine release notes, 2024-04-29 (Breaking): "When a VM in a MIG
            # reaches its time limit, the MIG deletes that VM instead of repairing it." So it is
            # not recreated; the sandbox lowers targetSize with it (Google does not say).
            mig["_members"].remove(member)
            mig["targetSize"] = len(mig["_members"])
        elif (
            why != "deleted"
            and mig["instanceLifecyclePolicy"].get("defaultActionOnFailure") == "DO_NOTHING"
        ):
            # A VM that failed (or a preempted spot VM): DO_NOTHING "MIG does not repair a failed
            # VM" (compute.v1.json); the default REPAIR recreates it.
            member["failed"] = True
        # "deleted" by hand: the MIG recreates it to keep its target size (ce:83).

    def advance(self, mig: dict[str, Any]) -> bool:
        vms = self._vm_records(mig)
        if mig.get("_deleting"):
            if any(v is not None for v in vms):
                return False
            op = self.operations.by_link(mig["_deleting"])
            if op is not None:
                self.operations.finish(op)
            self.records.pop(mig["_name"], None)
            return True
        missing = [m for m, v in zip(mig["_members"], vms, strict=True) if v is None]
        missing = [m for m in missing if not m.get("failed")]
        changed = False
        if missing:
            changed = self._create(mig, missing)
        if mig_status.topology_state(mig) == "ACTIVE" and self.faults.take("vm_failure"):
            self._fail_one(mig)
            changed = True
        mig_status.refresh(mig, self._vm_records(mig), self.store.data)
        return changed

    def _create(self, mig: dict[str, Any], missing: list[dict[str, Any]]) -> bool:
        """BULK (compute.v1.json): "if the MIG is unable to create even one VM, the MIG waits
        until all VMs can be created at the same time": in a stocked-out zone none is made."""
        project, zone = mig["_name"].split("/")[1], mig["_name"].split("/")[3]
        if zone in self.faults.stockout:
            mig["_bulk_error"] = ce.stockout_error(project, zone)
            mig["_bulk_checked"] = rfc3339()
            return False
        mig.pop("_bulk_error", None)
        template = self.parts.template_by_link(mig["instanceTemplate"], project)
        if template is None:  # cannot happen while the MIG uses it (mig_parts.users_of)
            return False
        for member in missing:
            body = dict(template["properties"], name=member["name"])
            if member.get("run_s") is not None:
                # A resize request's requestedRunDuration: "At the end of the run duration, the
                # MIG deletes the created VMs" (about-resize-requests-mig), as maxRunDuration.
                body["scheduling"] = dict(
                    body.get("scheduling") or {},
                    maxRunDuration={"seconds": str(member["run_s"])},
                    instanceTerminationAction="DELETE",
                )
            body["machineType"] = f"zones/{zone}/machineTypes/{body['machineType']}"
            body.pop("resourcePolicies", None)  # the template's, not the instance's, here
            try:
                self.instances.insert(project, zone, body)
            except ApiError as err:  # what Google refuses a VM: the MIG shows it, and waits
                mig["_bulk_error"] = {"code": err.status, "message": err.message}
                mig["_bulk_checked"] = rfc3339()
                return False
            vm = self.instances.records.get(self.vm_key(mig, member["name"]))
            if vm is not None:
                vm.update(_mig=mig["_name"], _index=member["index"])
                vm["networkInterfaces"][0]["networkIP"] = internal_address(member["index"])
        return True

    def _fail_one(self, mig: dict[str, Any]) -> None:
        """Fault vm_failure: the last worker's host fails; the VM stops (TERMINATED)."""
        vm = self._workers(mig)[-1]
        if vm is not None:
            vm.update(status="TERMINATED", lastStopTimestamp=rfc3339())
            vm.pop("resourceStatus", None)
            vm.pop("_ends_at", None)
            self.vms.stop_instance(vm["_name"], remove=False)
