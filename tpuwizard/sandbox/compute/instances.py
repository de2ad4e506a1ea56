"""Compute Engine TPU VMs (single host) in the sandbox: insert, read, delete, and their clock.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file, the zonal
operations, the VMs, the faults and the provisioning delay. Instances live in the same state file
as the TPU API's nodes (``store.data["instances"]``, keyed ``projects/P/zones/Z/instances/NAME``),
as Google's record, with the sandbox's own ``_`` keys beside it. Every rule cites
``reference/compute-engine.md`` ("ce:LINE"); the checks of an insert body are in
:mod:`tpuwizard.sandbox.compute.instance_rules`.
"""

from __future__ import annotations

import time
from typing import Any

from tpuwizard.sandbox import quota_limits
from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute import instance_rules
from tpuwizard.sandbox.compute.zone_operations import ZoneOperations, rfc3339
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import DELETE_SECONDS, ApiError, public
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.vms import VirtualMachines

# Of the provisioning delay: a Flex-start request waits this long for capacity (ce:49 PENDING),
# then PROVISIONING lasts a third of the delay and STAGING the rest (ce:49-51, ce:62).
FLEX_GRANT = 0.5
STAGING_AT = 1 / 3


def not_found(name: str) -> ApiError:
    return ApiError(404, "notFound", f"The resource '{name}' was not found")


class Instances:
    """The instances in ``store.data["instances"]`` and what time does to them."""

    def __init__(
        self,
        store: StateStore,
        operations: ZoneOperations,
        vms: VirtualMachines,
        faults: Faults,
        delay: float,
    ) -> None:
        self.store = store
        self.operations = operations
        self.vms = vms
        self.faults = faults
        self.delay = delay
        # The instances this tick removed, and why ("deleted", "time_limit", "failed",
        # "preempted"): the MIGs read it after the instances move on (migs.py), since a MIG
        # recreates a VM deleted by hand but not one Google ended.
        self.removed: list[tuple[dict[str, Any], str]] = []

    @property
    def records(self) -> dict[str, Any]:
        # A state file from before has none: it is read as it is, and gains them on an insert.
        return self.store.data.get("instances", {})

    def record(self, project: str, zone: str, name: str) -> dict[str, Any]:
        instance_rules.require_zone(zone)
        key = f"projects/{project}/zones/{zone}/instances/{name}"
        found = self.records.get(key)
        if found is None:
            raise not_found(key)
        return found

    # --- reads -------------------------------------------------------------------------------

    def get(self, project: str, zone: str, name: str) -> dict[str, Any]:
        return public(self.record(project, zone, name))

    def in_zone(self, project: str, zone: str) -> list[dict[str, Any]]:
        instance_rules.require_zone(zone)
        prefix = f"projects/{project}/zones/{zone}/instances/"
        return [public(r) for k, r in sorted(self.records.items()) if k.startswith(prefix)]

    def worker_homes(self, project: str, zone: str, name: str) -> list[str]:
        """Where the RUNNING instance's one worker lives (the server's home, as for nodes)."""
        found = self.records.get(f"projects/{project}/zones/{zone}/instances/{name}")
        if found is None or found["status"] != "RUNNING":
            raise ApiError(404, "notFound", f"Instance '{name}' was not found or is not RUNNING.")
        return [str(self.vms.instance_folder(found["_name"]) / "w0")]

    # --- insert ------------------------------------------------------------------------------

    def insert(self, project: str, zone: str, body: dict[str, Any]) -> dict[str, Any]:
        checked = instance_rules.check_insert(project, zone, body)
        key = f"projects/{project}/zones/{zone}/instances/{checked.name}"
        if key in self.records:
            raise ApiError(409, "alreadyExists", f"The resource '{key}' already exists")
        if self.faults.no_external_ip and ce.wants_external(body):
            raise ce.external_ip_forbidden(project, zone, checked.name)
        if self.faults.no_tpu7x_access and checked.machine.name.startswith(ce.TPU7X_PREFIX):
            raise ce.tpu7x_access_refused(checked.machine.name)
        self.store.data["counter"] += 1
        instance_id = str(ce.ID_BASE + self.store.data["counter"])
        op = self.operations.start(project, zone, "insert", key, instance_id)
        over = quota_limits.compute_over_limit(
            self.faults, self.records, project, zone, checked.machine, checked.model
        )
        if self.faults.take("quota") or over is not None:
            # ce:59-61 QUOTA_EXCEEDED in the operation's error; nothing is created.
            error = ce.quota_error(zone, checked.machine, checked.model, over or 0.0)
            self.operations.finish(op, error)
            self.store.save()
            return public(op)
        now = time.time()
        flex = checked.model == "FLEX_START"
        record = instance_rules.instance_record(project, zone, body, checked, instance_id)
        record.update(
            status="PENDING" if flex else "PROVISIONING",
            _name=key,
            _created_at=now,
            _insert_op=op["selfLink"],
            _external=ce.wants_external(body),
        )
        if flex:
            no_capacity = zone in self.faults.stockout or self.faults.flex_pending
            # ce:46 "a wait of 0 fails at once instead of queuing": with capacity there it is
            # granted now, else the request fails when its wait is over.
            wait = 0.0 if checked.valid_for_s == 0 else self.delay * FLEX_GRANT
            record["_granted_at"] = None if no_capacity else now + wait
            if checked.valid_for_s is not None:
                record["_valid_until"] = now + checked.valid_for_s
        else:
            record["_granted_at"] = now
        self.store.data.setdefault("instances", {})[key] = record
        self.store.save()
        return public(op)

    # --- delete ------------------------------------------------------------------------------

    def delete(self, project: str, zone: str, name: str, faulty: bool = True) -> dict[str, Any]:
        """Delete the instance; ``faulty``: the counted delete faults may act on it (not on the
        deletes a MIG makes of its own VMs, which answer only the MIG's delete)."""
        found = self.record(project, zone, name)
        op = self.operations.start(project, zone, "delete", found["_name"], found["id"])
        # ce:64 "deleting a PENDING Flex-start instance took 39 minutes once".
        slow = self.faults.slow_pending_delete if found["status"] == "PENDING" else None
        fail = faulty and self.faults.take("delete_fail")
        lie = faulty and not fail and self.faults.take("lying_delete")
        found.setdefault("_deletes", []).append(
            {
                "op": op["selfLink"],
                "at": time.time() + (slow if slow is not None else DELETE_SECONDS),
                "fail": fail,
                "lie": lie,
                "was": found.get("_was", found["status"]),
            }
        )
        found["_was"] = found.get("_was", found["status"])
        found["status"] = "STOPPING"
        self.store.save()
        return public(op)

    # --- setScheduling -----------------------------------------------------------------------

    def set_scheduling(
        self, project: str, zone: str, name: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        found = self.record(project, zone, name)
        if found["status"] != "TERMINATED":
            raise instance_rules.scheduling_refused(name, found["status"])
        scheduling = dict(found.get("scheduling", {}), **body)
        instance_rules.check_scheduling(scheduling, found["scheduling"]["provisioningModel"])
        found["scheduling"] = scheduling
        op = self.operations.start(project, zone, "setScheduling", found["_name"], found["id"])
        self.operations.finish(op)
        self.store.save()
        return public(op)

    # --- the clock ---------------------------------------------------------------------------

    def advance_all(self, t: float) -> bool:
        """Move every instance on as far as the clock ``t`` says; True if any changed."""
        changed = False
        for record in list(self.records.values()):
            changed |= self._advance(record, t)
        return changed

    def _insert_failed(self, record: dict[str, Any], error: dict[str, Any]) -> bool:
        """ce:62-63 "a failed Flex-start create deletes itself (only operations list shows it)":
        the insert ends DONE with the error, and the instance is gone."""
        op = self.operations.by_link(record["_insert_op"])
        if op is not None:
            self.operations.finish(op, error)
        self._remove(record, "failed")
        return True

    def _remove(self, record: dict[str, Any], why: str) -> None:
        self.removed.append((record, why))
        self.records.pop(record["_name"], None)
        self.vms.stop_instance(record["_name"], remove=True)

    def _advance(self, record: dict[str, Any], t: float) -> bool:
        if record.get("_deletes"):
            return self._advance_delete(record, t)
        status, zone = record["status"], record["_name"].split("/")[3]
        project = record["_name"].split("/")[1]
        granted = record.get("_granted_at")
        if status == "PENDING" or granted is None:
            if granted is not None and granted <= min(t, record.get("_valid_until", granted)):
                record["status"] = "PROVISIONING"
                return True
            if status == "PENDING" and t >= record.get("_valid_until", float("inf")):
                return self._insert_failed(record, ce.flex_wait_expired(project, zone))
            return False
        if status == "PROVISIONING" and t >= granted + self.delay * STAGING_AT:
            if zone in self.faults.stockout:  # ce:59-61
                return self._insert_failed(record, ce.stockout_error(project, zone))
            record["status"] = "STAGING"
            return True
        if status == "STAGING" and t >= granted + self.delay:
            if self.faults.take("staging_error"):  # ce:63-64
                return self._insert_failed(record, ce.internal_error())
            self._run(record, t)
            return True
        if status == "RUNNING":
            return self._advance_running(record, t)
        return False

    def _run(self, record: dict[str, Any], t: float) -> None:
        """RUNNING: the VM boots, the insert is DONE, and the deadline is set. Google's
        limit-vm-runtime page: the termination timestamp "is automatically defined by Compute
        Engine whenever a VM has a time limit and enters the RUNNING state"."""
        record.update(status="RUNNING", lastStartTimestamp=rfc3339(t), _running_at=t)
        scheduling = record["scheduling"]
        ends = instance_rules.termination_at(scheduling, t)
        if ends is not None:
            record["_ends_at"] = ends
            record["resourceStatus"] = {"scheduling": {"terminationTimestamp": rfc3339(ends)}}
        self.vms.boot_instance(record, record["_external"])
        op = self.operations.by_link(record["_insert_op"])
        if op is not None:
            self.operations.finish(op)

    def _advance_running(self, record: dict[str, Any], t: float) -> bool:
        scheduling = record["scheduling"]
        action = scheduling.get("instanceTerminationAction", "STOP")
        after = self.faults.preempt_after
        spot = scheduling.get("provisioningModel") == "SPOT"
        preempted = spot and after is not None and t - record["_running_at"] >= after
        if preempted and self.faults.preempt_times is not None:  # only the first N
            done = self.store.data.get("preemptions", 0)
            preempted = done < self.faults.preempt_times
            self.store.data["preemptions"] = done + int(preempted)
        if t >= record.get("_ends_at", float("inf")) or preempted:
            # ce:39-42 the run is over (or a spot VM is preempted): Google deletes or stops it.
            if action == "DELETE":
                self._remove(record, "preempted" if preempted else "time_limit")
            else:
                # limit-vm-runtime: the termination timestamp is cleared when a VM stops
                # (ce:56-58); the stopped VM's disk (its home) stays.
                record["status"] = "TERMINATED"
                record.pop("resourceStatus", None)
                record.pop("_ends_at", None)
                record["lastStopTimestamp"] = rfc3339(t)
                self.vms.stop_instance(record["_name"], remove=False)
            return True
        return False

    def _advance_delete(self, record: dict[str, Any], t: float) -> bool:
        due = [d for d in record["_deletes"] if d["at"] <= t]
        if not due:
            return False
        for done in due:
            record["_deletes"].remove(done)
            op = self.operations.by_link(done["op"])
            if done["fail"] or done["lie"]:
                error = ce.internal_error() if done["fail"] else None
                if op is not None:
                    self.operations.finish(op, error)
                continue
            if op is not None:
                self.operations.finish(op)
            insert = self.operations.by_link(record["_insert_op"])
            if insert is not None and insert["status"] != "DONE":
                # Deleted before it ran: its insert ends with the reason (the sandbox's wording).
                self.operations.finish(
                    insert,
                    {
                        "code": "RESOURCE_NOT_FOUND",
                        "message": f"The resource '{record['_name']}' was deleted while it "
                        "was being created.",
                    },
                )
            self._remove(record, "deleted")
            return True
        if not record["_deletes"]:  # only failed or lying deletes: it is as it was
            record["status"] = record.pop("_was")
        return True
