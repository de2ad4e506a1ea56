"""The sandbox's TPU nodes: create, read, delete, and what their operations do when done.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file, the operations,
the VMs, the faults and the provisioning delay. Queued resources make their nodes through
:meth:`Nodes.validate` and :meth:`Nodes.record`, so a node is the same however it was asked for.
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
    UPDATE_SECONDS,
    ApiError,
    now_iso,
    public,
)
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.tpu.operations import Operations
from tpuwizard.sandbox.vms import VirtualMachines

# What a create's body may set on the node; anything else in it is not kept.
NODE_FIELDS = (
    "autocheckpointEnabled",  # v2alpha1 only (refuse_unknown_in_v2)
    "acceleratorType",
    "acceleratorConfig",
    "runtimeVersion",
    "labels",
    "metadata",
    "description",
    "schedulingConfig",
    "networkConfig",
    "serviceAccount",
    "tags",
)
# nodes.patch: "updateMask ... Supported fields: [description, tags, labels, metadata,
# network_config.enable_external_ips]" (tpu.v2.json), a FieldMask in its proto or JSON spelling.
UPDATABLE = {
    "description": "description",
    "tags": "tags",
    "labels": "labels",
    "metadata": "metadata",
    "network_config.enable_external_ips": "networkConfig.enableExternalIps",
    "networkConfig.enableExternalIps": "networkConfig.enableExternalIps",
}


def refuse_early_delete(record: dict[str, Any], resource_id: str, delay: float) -> None:
    """google-behaviour.md:47: right after create, a delete is refused for a while."""
    creating = record.get("state") in ("CREATING", {"state": "CREATING"})
    age = time.time() - record.get("_created_at", 0.0)
    if creating and age < min(delay, google.UNDELETABLE_S):
        raise google.not_deletable(resource_id)


class Nodes:
    """The nodes kept in ``store.data["nodes"]``, keyed by their full resource name."""

    def __init__(
        self,
        store: StateStore,
        operations: Operations,
        vms: VirtualMachines,
        faults: Faults,
        delay: float,
    ) -> None:
        self.store = store
        self.operations = operations
        self.vms = vms
        self.faults = faults
        self.delay = delay

    def validate(
        self, project: str, zone: str, node_id: str, body: dict[str, Any]
    ) -> catalog.Slice:
        """The slice a create asks for, or Google's refusal of its zone, id, type or version."""
        require_zone(project, zone)
        if not NODE_ID_RE.fullmatch(node_id or ""):
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                (
                    f"Invalid node id '{node_id}': it must be 1-63 characters of lower-case "
                    "letters, digits and hyphens, start with a letter and not end with a hyphen."
                ),
            )
        acc = node_accelerator(body)
        if acc not in google.api_zone_table()[zone]:  # no tpu7x here: google-behaviour.md:28
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                f"Accelerator type '{acc}' is not available in zone {zone}.",
            )
        if not body.get("runtimeVersion"):
            raise ApiError(400, "INVALID_ARGUMENT", "A runtime version is required.")
        return catalog.parse_accelerator(acc)

    @staticmethod
    def refuse_unknown_in_v2(node: dict[str, Any], version: str, at: str) -> None:
        """``autocheckpointEnabled`` is a v2alpha1 field (the v2alpha1 discovery document's
        Node; v2's has none): v2 refuses it, as Google's JSON parsing refuses an unknown name."""
        if "autocheckpointEnabled" in node and version != "v2alpha1":
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                f'Invalid JSON payload received. Unknown name "autocheckpointEnabled" at '
                f"'{at}': Cannot find field.",
            )

    def record(
        self, project: str, zone: str, node_id: str, body: dict[str, Any], slice_: catalog.Slice
    ) -> dict[str, Any]:
        """A new CREATING node, stored; 409 if one of that name exists."""
        data = self.store.data
        name = f"projects/{project}/locations/{zone}/nodes/{node_id}"
        if name in data["nodes"]:
            raise ApiError(409, "ALREADY_EXISTS", f"Resource '{name}' already exists.")
        node = {k: v for k, v in body.items() if k in NODE_FIELDS}
        node["acceleratorType"] = slice_.name  # also where it was asked as acceleratorConfig
        data["counter"] += 1
        external = bool(body.get("networkConfig", {}).get("enableExternalIps"))
        node.update(
            name=name,
            id=str(google.NODE_ID_BASE + data["counter"]),
            state="CREATING",
            health="HEALTHY",
            createTime=now_iso(),
            _created_at=time.time(),
            # google-behaviour.md:11-16: external addresses only with enableExternalIps.
            networkEndpoints=google.endpoints(slice_.vms, external),
        )
        data["nodes"][name] = node
        return node

    def refuse_by_policy_or_quota(
        self,
        project: str,
        zone: str,
        node_id: str,
        node: dict[str, Any],
        slice_: catalog.Slice,
        preemptible: bool,
    ) -> None:
        """What the project forbids before anything is made: an external IP the org policy
        denies (fault no_external_ip), or more chips than the quota leaves (quota_limit)."""
        if self.faults.no_external_ip and node.get("networkConfig", {}).get("enableExternalIps"):
            resource = f"projects/{project}/locations/{zone}/nodes/{node_id}"
            raise google.external_ip_forbidden(project, resource)
        quota_limits.refuse_tpu_api_create(
            self.faults, self.store.data, project, zone, slice_.name, preemptible
        )

    def create_node(
        self, project: str, zone: str, node_id: str, body: dict[str, Any], version: str
    ) -> dict[str, Any]:
        slice_ = self.validate(project, zone, node_id, body)
        self.refuse_unknown_in_v2(body, version, "node")
        preemptible = bool(body.get("schedulingConfig", {}).get("spot")) or bool(
            body.get("schedulingConfig", {}).get("preemptible")
        )
        self.refuse_by_policy_or_quota(project, zone, node_id, body, slice_, preemptible)
        node = self.record(project, zone, node_id, body, slice_)
        op = self.operations.start(
            project,
            zone,
            "create",
            node["name"],
            version,
            time.time() + self.delay,
            {"kind": "create_node", "stockout": zone in self.faults.stockout},
        )
        if zone not in self.faults.stockout:
            node["_reachable_at"] = time.time() + self.delay * google.REACHABLE_AT
        self.vms.sync_keys()
        self.store.save()
        return public(op)

    def get_node(self, project: str, zone: str, node_id: str) -> dict[str, Any]:
        require_zone(project, zone)
        name = f"projects/{project}/locations/{zone}/nodes/{node_id}"
        node = self.store.data["nodes"].get(name)
        if node is None:
            raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found.")
        return public(node)

    def list_nodes(self, project: str, zone: str) -> list[dict[str, Any]]:
        require_zone(project, zone)
        prefix = f"projects/{project}/locations/{zone}/nodes/"
        nodes = sorted(self.store.data["nodes"].items())
        return [public(n) for name, n in nodes if name.startswith(prefix)]

    def delete_node(self, project: str, zone: str, node_id: str, version: str) -> dict[str, Any]:
        self.get_node(project, zone, node_id)
        node = self.store.data["nodes"][f"projects/{project}/locations/{zone}/nodes/{node_id}"]
        if node.get("queuedResource"):
            raise ApiError(
                400,
                "FAILED_PRECONDITION",
                (
                    f"Node {node_id} belongs to queued resource {node['queuedResource']}: "
                    "delete the queued resource instead."
                ),
            )
        refuse_early_delete(node, node_id, self.delay)
        node["state"] = "DELETING"
        fail = self.faults.take("delete_fail")
        lie = not fail and self.faults.take("lying_delete")
        op = self.operations.start(
            project,
            zone,
            "delete",
            node["name"],
            version,
            time.time() + DELETE_SECONDS,
            {"kind": "delete_node", "fail": fail, "lie": lie},
        )
        self.store.save()
        return public(op)

    def update_node(
        self,
        project: str,
        zone: str,
        node_id: str,
        body: dict[str, Any],
        update_mask: str,
        version: str,
    ) -> dict[str, Any]:
        """nodes.patch: the fields ``update_mask`` names take their values in ``body`` (absent:
        cleared, as a FieldMask means) when its operation is done; a node's queued resource owns
        its deletion, not its metadata, so gcloud's ssh can add its key there too."""
        self.get_node(project, zone, node_id)  # the zone's rules, and 404 for another's name
        name = f"projects/{project}/locations/{zone}/nodes/{node_id}"
        paths = [p.strip() for p in update_mask.split(",") if p.strip()]
        wrong = [p for p in paths if p not in UPDATABLE]
        if not paths or wrong:
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                f"Invalid updateMask '{update_mask}': name the fields to update among "
                "description, tags, labels, metadata and network_config.enable_external_ips.",
            )
        fields: dict[str, Any] = {}
        for path in dict.fromkeys(UPDATABLE[p] for p in paths):
            if path == "networkConfig.enableExternalIps":
                fields[path] = bool(body.get("networkConfig", {}).get("enableExternalIps"))
            elif path in body:
                fields[path] = body[path]
            else:
                fields[path] = None
        op = self.operations.start(
            project,
            zone,
            "update",
            name,
            version,
            time.time() + UPDATE_SECONDS,
            {"kind": "update_node", "fields": fields},
        )
        self.store.save()
        return public(op)

    def finish_update(self, op: dict[str, Any]) -> None:
        """A node's update is done: its fields changed (the VMs' keys follow, in the tick)."""
        target = op["metadata"]["target"]
        node = self.store.data["nodes"].get(target)
        if node is None:
            op["error"] = {"code": 5, "message": f"Resource '{target}' was not found."}
            return
        for path, value in op["_on_done"]["fields"].items():
            if path == "networkConfig.enableExternalIps":
                self.vms.set_external_ips(node, bool(value))
            elif value is None:
                node.pop(path, None)
            else:
                node[path] = value
        node_type = RESPONSE_TYPE.format(version=op["metadata"]["apiVersion"], kind="Node")
        op["response"] = dict(public(node), **{"@type": node_type})

    def finish_create(self, op: dict[str, Any]) -> None:
        """A node's create operation is done: READY (or a stockout, or still CREATING)."""
        action, target = op["_on_done"], op["metadata"]["target"]
        node = self.store.data["nodes"].get(target)
        if node is None:
            op["error"] = {"code": 1, "message": "The node was deleted while it was created."}
        elif action.get("stockout"):
            self.vms.remove_node(target)
            # google-behaviour.md:39-41: the operation ends with Google's code and text.
            op["error"] = google.stockout(target.split("/")[3], self.faults.stockout_code)
        else:
            if not self.faults.never_ready:
                self.vms.make_ready(node)
            node_type = RESPONSE_TYPE.format(version=op["metadata"]["apiVersion"], kind="Node")
            op["response"] = dict(public(node), **{"@type": node_type})

    def finish_delete(self, op: dict[str, Any]) -> None:
        """A node's delete operation is done: gone, or (with a fault) READY still."""
        action, target = op["_on_done"], op["metadata"]["target"]
        if action.get("lie"):  # done, no error, and nothing happened
            node = self.store.data["nodes"].get(target)
            if node is not None:
                node["state"] = "READY"
            op["response"] = {"@type": EMPTY_TYPE}
        elif action.get("fail"):
            node = self.store.data["nodes"].get(target)
            if node is not None:
                node["state"] = "READY"
            op["error"] = {"code": 13, "message": "Internal error while deleting the node."}
        else:
            self.vms.remove_node(target)
            op["response"] = {"@type": EMPTY_TYPE}
