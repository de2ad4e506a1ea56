"""The sandbox's queued resources (v2 spot and guaranteed, v2alpha1 Flex-start).

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file, the operations,
the nodes (a queued resource's node is made as a node's create makes one), the VMs, the faults
and the provisioning delay.
"""

from __future__ import annotations

import time
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google, quota_limits
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.locations import node_accelerator, require_zone
from tpuwizard.sandbox.model import (
    DELETE_SECONDS,
    EMPTY_TYPE,
    NODE_ID_RE,
    RESPONSE_TYPE,
    ApiError,
    now_iso,
    parse_duration,
    public,
)
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.tpu.nodes import Nodes, refuse_early_delete
from tpuwizard.sandbox.tpu.operations import Operations
from tpuwizard.sandbox.vms import VirtualMachines


class QueuedResources:
    """Create, advance, read and delete the queued resources in ``store.data["queued"]``."""

    def __init__(
        self,
        store: StateStore,
        operations: Operations,
        nodes: Nodes,
        vms: VirtualMachines,
        faults: Faults,
        delay: float,
    ) -> None:
        self.store = store
        self.operations = operations
        self.nodes = nodes
        self.vms = vms
        self.faults = faults
        self.delay = delay

    @staticmethod
    def public_qr(qr: dict[str, Any], version: str) -> dict[str, Any]:
        out = {k: v for k, v in qr.items() if not k.startswith("_")}
        if version == "v2":
            out.pop("provisioningModel", None)
            out.pop("runDuration", None)
        return out

    def create_queued(
        self, project: str, zone: str, qr_id: str, body: dict[str, Any], version: str
    ) -> dict[str, Any]:
        require_zone(project, zone)
        if not NODE_ID_RE.fullmatch(qr_id or ""):
            raise ApiError(400, "INVALID_ARGUMENT", f"Invalid queued resource id '{qr_id}'.")
        name = f"projects/{project}/locations/{zone}/queuedResources/{qr_id}"
        if name in self.store.data["queued"]:
            raise ApiError(409, "ALREADY_EXISTS", f"Resource '{name}' already exists.")
        specs = body.get("tpu", {}).get("nodeSpec", [])
        if len(specs) != 1:
            raise ApiError(400, "INVALID_ARGUMENT", "Exactly one nodeSpec is supported.")
        spec = specs[0]
        slice_ = self.nodes.validate(project, zone, spec.get("nodeId", ""), spec.get("node", {}))
        self.nodes.refuse_unknown_in_v2(
            spec.get("node", {}), version, "queued_resource.tpu.node_spec[0].node"
        )
        flex = body.get("provisioningModel") == "FLEX_START"
        # google-behaviour.md:23: Flex-start "exists only through v2alpha1 queued resources",
        # and only for a few generations and zones.
        if flex and version != "v2alpha1":
            raise ApiError(400, "INVALID_ARGUMENT", "Flex-start needs the v2alpha1 API.")
        if flex and not google.flex_offered(slice_.name, zone):
            raise google.flex_refused(slice_.name, zone)
        self.nodes.refuse_by_policy_or_quota(
            project,
            zone,
            str(spec.get("nodeId", "")),
            spec.get("node", {}),
            slice_,
            quota_limits.queued_preemptible(body),
        )
        qr: dict[str, Any] = {
            k: v
            for k, v in body.items()
            if k
            in ("tpu", "spot", "guaranteed", "queueingPolicy", "provisioningModel", "runDuration")
        }
        qr.update(
            name=name, createTime=now_iso(), state={"state": "CREATING"}, _created_at=time.time()
        )
        if flex:
            duration = parse_duration(body.get("runDuration", {}).get("maxRunDuration", ""))
            if not 0 < duration <= 7 * 24 * 3600:
                raise ApiError(400, "INVALID_ARGUMENT", "maxRunDuration must be up to 7 days.")
            qr["_max_run"] = duration
        # google-behaviour.md:19: validUntilDuration is the only Google-side bound on the wait.
        wait = body.get("queueingPolicy", {}).get("validUntilDuration")
        if wait is not None:
            qr["_valid_until"] = time.time() + parse_duration(wait)
        self.store.data["queued"][name] = qr
        op = self.operations.start(
            project, zone, "create", name, version, time.time() + 0.05, {"kind": "create_queued"}
        )
        self.store.save()
        return public(op)

    def advance_all(self, t: float) -> bool:
        """Move every queued resource on as far as the clock ``t`` says; True if any moved."""
        changed = False
        for qr in list(self.store.data["queued"].values()):
            changed |= self._advance(qr, t)
        return changed

    def _advance(self, qr: dict[str, Any], t: float) -> bool:
        """One queued resource on to the state its age says (CREATING, ACCEPTED, PROVISIONING,
        ACTIVE), or FAILED, WAITING_FOR_RESOURCES or SUSPENDED; True if it moved."""
        state = qr["state"]["state"]
        age = t - qr["_created_at"]
        zone = qr["name"].split("/")[3]
        new = state
        waiting = ("CREATING", "ACCEPTED", "PROVISIONING", "WAITING_FOR_RESOURCES")
        if state in waiting and t >= qr.get("_valid_until", float("inf")):
            # google-behaviour.md:19 "the request will be failed"; :46 the reason's place.
            return self._fail_queued(qr, google.queue_expired())
        spot_refused = qr.get("spot") is not None and self.faults.stockout_code in (13, 5)
        refused_now = spot_refused and age >= self.delay / 3
        if state in waiting and zone in self.faults.stockout and refused_now:
            # google-behaviour.md:41: the spot create is refused
            return self._fail_queued(qr, google.stockout(zone, self.faults.stockout_code))
        if state in waiting:
            if zone in self.faults.stockout:
                new = "ACCEPTED" if age < self.delay / 3 else "WAITING_FOR_RESOURCES"
            elif age >= self.delay:
                new = "ACTIVE"
            elif age >= 2 * self.delay / 3:
                new = "PROVISIONING"
            elif age >= self.delay / 3:
                new = "ACCEPTED"
        if new in ("PROVISIONING", "ACTIVE") and "_node" not in qr:
            spec = qr["tpu"]["nodeSpec"][0]
            project, zone_ = spec["parent"].split("/")[1], spec["parent"].split("/")[3]
            slice_ = catalog.parse_accelerator(node_accelerator(spec["node"]))
            try:
                node = self.nodes.record(project, zone_, spec["nodeId"], spec["node"], slice_)
            except ApiError as err:  # e.g. a node of that name already exists
                return self._fail_queued(qr, {"code": 6, "message": err.message})
            node["queuedResource"] = qr["name"]
            if qr.get("spot") is not None:
                node.setdefault("schedulingConfig", {})["spot"] = True
            if qr.get("provisioningModel") == "FLEX_START":
                node["_preemptible"] = True  # its chips are preemptible quota's (gb:26)
            qr["_node"] = node["name"]
        if new == "ACTIVE" and state != "ACTIVE":
            node = self.store.data["nodes"].get(qr["_node"])
            if node is not None and not self.faults.never_ready:
                self.vms.make_ready(node)
            if "_max_run" in qr:
                qr["_ends_at"] = t + qr["_max_run"]
                qr["runDuration"]["terminationTime"] = now_iso(qr["_ends_at"])
        if state == "ACTIVE" and "_ends_at" in qr and t >= qr["_ends_at"]:
            # Flex-start's run is over: the VMs are deleted and the request is SUSPENDED.
            self.vms.remove_node(qr["_node"])
            new = "SUSPENDED"
        if new != state:
            qr["state"] = {"state": new}
            if new == "SUSPENDED":  # stateInitiator: whether the user or the service did it
                qr["state"]["stateInitiator"] = "SERVICE"
            return True
        return False

    @staticmethod
    def _fail_queued(qr: dict[str, Any], error: dict[str, Any]) -> bool:
        """google-behaviour.md:46: FAILED, with the reason in state.failedData.error."""
        qr["state"] = {"state": "FAILED", "failedData": {"error": error}}
        return True

    def get_queued(self, project: str, zone: str, qr_id: str, version: str) -> dict[str, Any]:
        require_zone(project, zone)
        name = f"projects/{project}/locations/{zone}/queuedResources/{qr_id}"
        qr = self.store.data["queued"].get(name)
        if qr is None:
            raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found.")
        return self.public_qr(qr, version)

    def list_queued(self, project: str, zone: str, version: str) -> list[dict[str, Any]]:
        require_zone(project, zone)
        prefix = f"projects/{project}/locations/{zone}/queuedResources/"
        return [
            self.public_qr(q, version)
            for n, q in sorted(self.store.data["queued"].items())
            if n.startswith(prefix)
        ]

    def delete_queued(
        self, project: str, zone: str, qr_id: str, force: bool, version: str
    ) -> dict[str, Any]:
        self.get_queued(project, zone, qr_id, version)
        name = f"projects/{project}/locations/{zone}/queuedResources/{qr_id}"
        qr = self.store.data["queued"][name]
        refuse_early_delete(qr, qr_id, self.delay)  # google-behaviour.md:47
        free = qr["state"]["state"] in ("ACCEPTED", "FAILED", "SUSPENDED")
        if self._own_node(qr) is not None and not force and not free:
            raise google.queued_has_nodes(qr_id)  # google-behaviour.md:48
        was, qr["state"] = qr["state"], {"state": "DELETING"}
        fail = self.faults.take("delete_fail")
        lie = not fail and self.faults.take("lying_delete")
        op = self.operations.start(
            project,
            zone,
            "delete",
            name,
            version,
            time.time() + DELETE_SECONDS,
            {"kind": "delete_queued", "fail": fail, "lie": lie, "was": was},
        )
        self.store.save()
        return public(op)

    def finish_create(self, op: dict[str, Any]) -> None:
        """A queued resource's create operation is done: it answers with the request."""
        target, version = op["metadata"]["target"], op["metadata"]["apiVersion"]
        qr = self.store.data["queued"][target]
        op["response"] = dict(
            self.public_qr(qr, version),
            **{"@type": RESPONSE_TYPE.format(version=version, kind="QueuedResource")},
        )

    def _own_node(self, qr: dict[str, Any]) -> str | None:
        """The node this request made, while it exists: the one whose ``queuedResource`` names
        the request ("The qualified name of the QueuedResource that requested this Node", Node
        in tpu.v2.json). A node that merely has the name in the request's node spec (made
        before it, by anyone) is not the request's: its create failed on that name."""
        node = self.store.data["nodes"].get(qr.get("_node", ""))
        if node is None or node.get("queuedResource") != qr["name"]:
            return None
        return str(node["name"])

    def finish_delete(self, op: dict[str, Any]) -> None:
        """A queued resource's delete operation is done: it and the node it made are gone (or,
        with a lying delete, it is back in the state it was in; with a failing one, the same and
        the operation ends with an internal error).

        Only the request's own node goes: "all running nodes belonging to this queued resource
        will be deleted first" (DeleteQueuedResourceRequest.force, cloud.google.com/tpu/docs/
        reference/rest/v2/projects.locations.queuedResources/delete). A node of the spec's name
        that the request did not make (another user's, made earlier) is left alone."""
        action, target = op["_on_done"], op["metadata"]["target"]
        queued = self.store.data["queued"]
        if action.get("lie") or action.get("fail"):  # the request is still there
            if target in queued:
                queued[target]["state"] = action["was"]
            if action.get("fail"):
                op["error"] = {"code": 13, "message": "Internal error while deleting the request."}
            else:
                op["response"] = {"@type": EMPTY_TYPE}
            return
        qr = queued.pop(target, None)
        own = self._own_node(qr) if qr is not None else None
        if own is not None:
            self.vms.remove_node(own)
        op["response"] = {"@type": EMPTY_TYPE}
