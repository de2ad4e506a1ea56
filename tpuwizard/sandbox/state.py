"""The sandbox's model of a TPU project: nodes, queued resources and long-running operations.

Everything is kept in one JSON file under the sandbox's home, so a crashed and restarted tpuwizard
(or sandbox) sees the same nodes. Time moves lazily: each request first "ticks" the model, which
finishes operations and advances states whose deadline has passed, so no background thread is
needed and a restart resumes where the clock says.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import (
    DELETE_SECONDS,
    EMPTY_TYPE,
    GENERATION_ENUM,
    NODE_ID_RE,
    OP_TYPE,
    RESPONSE_TYPE,
    ApiError,
    now_iso,
    worker_home,
)
from tpuwizard.sandbox.queued import QueuedResources
from tpuwizard.sandbox.vms import VirtualMachines


class SandboxState(QueuedResources, VirtualMachines):
    def __init__(
        self,
        home: Path,
        faults: Faults,
        delay: float = 1.0,
        authorized_keys: Path | None = None,
        ssh_port: int = 22,
    ) -> None:
        self.home = home
        self.home.mkdir(parents=True, exist_ok=True)
        self.file = home / "state.json"
        self.faults = faults
        self.delay = faults.slow_create if faults.slow_create is not None else delay
        self.authorized_keys = authorized_keys
        self.ssh_port = ssh_port
        self.lock = threading.RLock()
        self.data: dict[str, Any] = {"nodes": {}, "queued": {}, "operations": {}, "counter": 0}
        self._seen: tuple[int, int, int] | None = None  # the state file as last read or written
        with contextlib.suppress(ApiError):  # a damaged file is said on every request instead
            self._reload()

    # -- persistence ------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One request or clock tick: this process's lock, then an exclusive lock on the state
        file shared with every other sandbox serving this home (two launches sharing one
        TPUWIZARD_HOME each run one), reading what another one wrote before changing it."""
        with self.lock:
            fd = os.open(self.home / "state.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._reload()
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = self.file.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _reload(self) -> None:
        seen = self._signature()
        if seen is not None and seen != self._seen:
            try:
                data = json.loads(self.file.read_text())
                if not isinstance(data, dict) or not {"nodes", "queued"} <= data.keys():
                    raise ValueError("it does not hold the sandbox's nodes and queued resources")
            except (ValueError, UnicodeDecodeError) as err:
                # Never "the request was bad" (the client would say Google rejected it), and
                # never written over: it is the only record of what the practice cloud holds.
                raise ApiError(
                    500,
                    "INTERNAL",
                    f"The practice sandbox cannot read its state file {self.file}: it is "
                    f"damaged ({err}). Stop the practice cloud, then move that file aside: the "
                    "sandbox then starts empty (its nodes are forgotten; their folders stay "
                    f"under {self.home / 'workers'}).",
                ) from err
            self.data = data
        self._seen = seen

    def save(self) -> None:
        tmp = self.file.with_name(f"state.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
        os.replace(tmp, self.file)
        self._seen = self._signature()

    def worker_home(self, node_name: str, worker: int) -> Path:
        return worker_home(self.home, node_name, worker)

    # -- zones and types ----------------------------------------------------------------------
    @staticmethod
    def zones() -> list[str]:
        return google.location_ids()

    def require_zone(self, project: str, zone: str) -> None:
        if zone in google.FORBIDDEN_ZONES:  # google-behaviour.md:44
            raise google.location_forbidden(zone)
        if zone not in google.api_zone_table():
            raise ApiError(
                404, "NOT_FOUND", f"Location projects/{project}/locations/{zone} was not found."
            )

    def accelerator_types(self, zone: str) -> list[dict[str, Any]]:
        out = []
        for name in google.api_zone_table()[zone]:
            entry: dict[str, Any] = {"type": name}
            enum = GENERATION_ENUM.get(catalog.parse_accelerator(name).generation.key)
            if enum:
                entry["acceleratorConfigs"] = [{"type": enum}]
            out.append(entry)
        return out

    def runtime_versions(self, zone: str) -> list[str]:
        offered = {
            catalog.parse_accelerator(n).generation.runtime_version
            for n in google.api_zone_table()[zone]
        }
        return sorted(offered)

    # -- operations ---------------------------------------------------------------------------
    def _new_operation(
        self,
        project: str,
        zone: str,
        verb: str,
        target: str,
        version: str,
        done_at: float,
        on_done: dict[str, Any],
    ) -> dict[str, Any]:
        self.data["counter"] += 1
        name = f"projects/{project}/locations/{zone}/operations/operation-{self.data['counter']}"
        op = {
            "name": name,
            "metadata": {
                "@type": OP_TYPE.format(version=version),
                "createTime": now_iso(),
                "target": target,
                "verb": verb,
                "apiVersion": version,
            },
            "done": False,
            "_done_at": done_at,
            "_on_done": on_done,
        }
        self.data["operations"][name] = op
        return op

    @staticmethod
    def public(op: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in op.items() if not k.startswith("_")}

    def get_operation(self, name: str) -> dict[str, Any]:
        op = self.data["operations"].get(name)
        if op is None:
            raise ApiError(404, "NOT_FOUND", f"Operation {name} was not found.")
        return self.public(op)

    # -- time -------------------------------------------------------------------------------
    def tick(self) -> None:
        """Advance every state whose time has come."""
        t = time.time()
        changed = False
        for op in self.data["operations"].values():
            if not op["done"] and op["_done_at"] <= t:
                self._finish(op)
                changed = True
        for qr in list(self.data["queued"].values()):
            changed |= self._advance_queued(qr, t)
        changed |= self._preempt_spot(t)
        for node in self.data["nodes"].values():
            boots_at = node.get("_reachable_at")
            if boots_at is not None and boots_at <= t and node["state"] == "CREATING":
                self._boot_workers(node)  # google-behaviour.md:49: reachable before READY
                changed = True
        if changed:
            self._sync_keys()
            self.save()

    def _finish(self, op: dict[str, Any]) -> None:
        action = op["_on_done"]
        op["done"] = True
        op["metadata"]["endTime"] = now_iso()
        kind, target = action["kind"], op["metadata"]["target"]
        version = op["metadata"]["apiVersion"]
        if kind == "create_node":
            node = self.data["nodes"].get(target)
            if node is None:
                op["error"] = {"code": 1, "message": "The node was deleted while it was created."}
            elif action.get("stockout"):
                self._remove_node(target)
                # google-behaviour.md:39-41: the operation ends with Google's code and text.
                op["error"] = google.stockout(target.split("/")[3], self.faults.stockout_code)
            else:
                if not self.faults.never_ready:
                    self._make_ready(node)
                node_type = RESPONSE_TYPE.format(version=version, kind="Node")
                op["response"] = dict(self.public(node), **{"@type": node_type})
        elif kind == "delete_node":
            if action.get("lie"):  # done, no error, and nothing happened
                node = self.data["nodes"].get(target)
                if node is not None:
                    node["state"] = "READY"
                op["response"] = {"@type": EMPTY_TYPE}
            elif action.get("fail"):
                node = self.data["nodes"].get(target)
                if node is not None:
                    node["state"] = "READY"
                op["error"] = {"code": 13, "message": "Internal error while deleting the node."}
            else:
                self._remove_node(target)
                op["response"] = {"@type": EMPTY_TYPE}
        elif kind == "create_queued":
            qr = self.data["queued"][target]
            op["response"] = dict(
                self._public_qr(qr, version),
                **{"@type": RESPONSE_TYPE.format(version=version, kind="QueuedResource")},
            )
        elif kind == "delete_queued":
            if action.get("lie"):  # done, no error, and the request is still there
                if target in self.data["queued"]:
                    self.data["queued"][target]["state"] = action["was"]
                op["response"] = {"@type": EMPTY_TYPE}
                return
            qr = self.data["queued"].pop(target, None)
            if qr is not None:
                for spec in qr["tpu"]["nodeSpec"]:
                    self._remove_node(f"{spec['parent']}/nodes/{spec['nodeId']}")
            op["response"] = {"@type": EMPTY_TYPE}

    # -- nodes ------------------------------------------------------------------------------
    def _validate_node(
        self, project: str, zone: str, node_id: str, body: dict[str, Any]
    ) -> catalog.Slice:
        self.require_zone(project, zone)
        if not NODE_ID_RE.fullmatch(node_id or ""):
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                (
                    f"Invalid node id '{node_id}': it must be 1-63 characters of lower-case "
                    "letters, digits and hyphens, start with a letter and not end with a hyphen."
                ),
            )
        acc = body.get("acceleratorType", "")
        if acc not in google.api_zone_table()[zone]:  # no tpu7x here: google-behaviour.md:28
            raise ApiError(
                400,
                "INVALID_ARGUMENT",
                f"Accelerator type '{acc}' is not available in zone {zone}.",
            )
        if not body.get("runtimeVersion"):
            raise ApiError(400, "INVALID_ARGUMENT", "A runtime version is required.")
        return catalog.parse_accelerator(acc)

    def _node_record(
        self, project: str, zone: str, node_id: str, body: dict[str, Any], slice_: catalog.Slice
    ) -> dict[str, Any]:
        name = f"projects/{project}/locations/{zone}/nodes/{node_id}"
        if name in self.data["nodes"]:
            raise ApiError(409, "ALREADY_EXISTS", f"Resource '{name}' already exists.")
        node = {
            k: v
            for k, v in body.items()
            if k
            in (
                "acceleratorType",
                "runtimeVersion",
                "labels",
                "metadata",
                "description",
                "schedulingConfig",
                "networkConfig",
                "serviceAccount",
                "tags",
            )
        }
        self.data["counter"] += 1
        external = bool(body.get("networkConfig", {}).get("enableExternalIps"))
        node.update(
            name=name,
            id=str(google.NODE_ID_BASE + self.data["counter"]),
            state="CREATING",
            health="HEALTHY",
            createTime=now_iso(),
            _created_at=time.time(),
            # google-behaviour.md:11-16: external addresses only with enableExternalIps.
            networkEndpoints=google.endpoints(slice_.vms, external),
        )
        self.data["nodes"][name] = node
        return node

    def create_node(
        self, project: str, zone: str, node_id: str, body: dict[str, Any], version: str
    ) -> dict[str, Any]:
        slice_ = self._validate_node(project, zone, node_id, body)
        node = self._node_record(project, zone, node_id, body, slice_)
        op = self._new_operation(
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
        self._sync_keys()
        self.save()
        return self.public(op)

    def get_node(self, project: str, zone: str, node_id: str) -> dict[str, Any]:
        self.require_zone(project, zone)
        name = f"projects/{project}/locations/{zone}/nodes/{node_id}"
        node = self.data["nodes"].get(name)
        if node is None:
            raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found.")
        return self.public(node)

    def list_nodes(self, project: str, zone: str) -> list[dict[str, Any]]:
        self.require_zone(project, zone)
        prefix = f"projects/{project}/locations/{zone}/nodes/"
        nodes = sorted(self.data["nodes"].items())
        return [self.public(n) for name, n in nodes if name.startswith(prefix)]

    def refuse_early_delete(self, record: dict[str, Any], resource_id: str) -> None:
        """google-behaviour.md:47: right after create, a delete is refused for a while."""
        creating = record.get("state") in ("CREATING", {"state": "CREATING"})
        age = time.time() - record.get("_created_at", 0.0)
        if creating and age < min(self.delay, google.UNDELETABLE_S):
            raise google.not_deletable(resource_id)

    def delete_node(self, project: str, zone: str, node_id: str, version: str) -> dict[str, Any]:
        self.get_node(project, zone, node_id)
        node = self.data["nodes"][f"projects/{project}/locations/{zone}/nodes/{node_id}"]
        if node.get("queuedResource"):
            raise ApiError(
                400,
                "FAILED_PRECONDITION",
                (
                    f"Node {node_id} belongs to queued resource {node['queuedResource']}: "
                    "delete the queued resource instead."
                ),
            )
        self.refuse_early_delete(node, node_id)
        node["state"] = "DELETING"
        fail = self.faults.take("delete_fail")
        lie = not fail and self.faults.take("lying_delete")
        op = self._new_operation(
            project,
            zone,
            "delete",
            node["name"],
            version,
            time.time() + DELETE_SECONDS,
            {"kind": "delete_node", "fail": fail, "lie": lie},
        )
        self.save()
        return self.public(op)
