"""Compute Engine's zonal and regional operations, as the sandbox keeps them.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file. Compute Engine's
operations are not the TPU API's (``compute#operation``: a ``status`` of PENDING, RUNNING or DONE,
and ``error.errors[]`` with string codes; compute-engine.md:59-61), so they are kept apart from
:class:`~tpuwizard.sandbox.tpu.operations.Operations`, in ``store.data["zone_operations"]``. The
instances part says when each one is done (:meth:`ZoneOperations.finish`).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from tpuwizard.sandbox.compute import google as compute_google
from tpuwizard.sandbox.model import ApiError, public
from tpuwizard.sandbox.store import StateStore

USER = "practice@example.com"


def rfc3339(t: float | None = None) -> str:
    """Compute Engine's timestamps: RFC 3339 with milliseconds and an offset."""
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(t if t is not None else time.time(), UTC)
    return moment.isoformat(timespec="milliseconds")


class ZoneOperations:
    """Start, read and finish the operations in ``store.data["zone_operations"]``."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    @property
    def ops(self) -> dict[str, Any]:
        return self.store.data.get("zone_operations", {})  # none in a state file from before

    def start(
        self, project: str, zone: str, kind: str, target: str, target_id: str
    ) -> dict[str, Any]:
        """A RUNNING operation of ``kind`` (insert, delete, setScheduling) on ``target``."""
        return self._start(project, "zones", zone, kind, target, target_id)

    def start_regional(
        self, project: str, region: str, kind: str, target: str, target_id: str
    ) -> dict[str, Any]:
        """A RUNNING regional operation (``regions/R/operations/OP``): instance templates and
        resource policies are regional, so their inserts and deletes are."""
        return self._start(project, "regions", region, kind, target, target_id)

    def start_global(self, project: str, kind: str, target: str, target_id: str) -> dict[str, Any]:
        """A RUNNING global operation (``global/operations/OP``): a global instance template's
        insert and delete are (compute.v1.json instanceTemplates.insert answers an Operation
        there, which gcloud polls with globalOperations)."""
        return self._start(project, "global", "", kind, target, target_id)

    def _start(
        self, project: str, scope: str, where: str, kind: str, target: str, target_id: str
    ) -> dict[str, Any]:
        data = self.store.data
        data["counter"] += 1
        now = time.time()
        name = f"operation-{int(now * 1000)}-{secrets.token_hex(6)}"
        scope_path = f"{scope}/{where}" if where else scope  # "global" has no name after it
        zone_url = f"{compute_google.BASE}projects/{project}/{scope_path}"
        op = {
            "kind": "compute#operation",
            "id": str(compute_google.ID_BASE + data["counter"]),
            "name": name,
            "operationType": kind,
            "targetLink": f"{compute_google.BASE}{target}",
            "targetId": target_id,
            "status": "RUNNING",
            "user": USER,
            "progress": 0,
            "insertTime": rfc3339(now),
            "startTime": rfc3339(now),
            "selfLink": f"{zone_url}/operations/{name}",
        }
        if scope != "global":
            op["zone" if scope == "zones" else "region"] = zone_url
        key = f"projects/{project}/{scope_path}/operations/{name}"
        data.setdefault("zone_operations", {})[key] = op
        return op

    def finish(self, op: dict[str, Any], error: dict[str, Any] | None = None) -> None:
        """DONE, with ``error`` (one of ``error.errors[]``) if it failed."""
        if op["status"] == "DONE":
            return
        op.update(status="DONE", progress=100, endTime=rfc3339())
        if error is not None:
            op["error"] = {"errors": [error]}

    def find(
        self, project: str, zone: str, name: str, scope: str = "zones"
    ) -> dict[str, Any] | None:
        """``scope`` "zones", "regions" (``zone`` naming it) or "global" (``zone`` empty)."""
        where = f"{scope}/{zone}" if zone else scope
        return self.ops.get(f"projects/{project}/{where}/operations/{name}")

    def by_link(self, self_link: str) -> dict[str, Any] | None:
        name = self_link.removeprefix(compute_google.BASE)
        return self.ops.get(name)

    def get(self, project: str, zone: str, name: str, scope: str = "zones") -> dict[str, Any]:
        """The operation ``name`` of a zone (``scope`` "zones") or a region ("regions")."""
        op = self.find(project, zone, name, scope)
        if op is None:
            where = f"{scope}/{zone}" if zone else scope
            raise ApiError(
                404,
                "notFound",
                f"The resource 'projects/{project}/{where}/operations/{name}' was not found",
            )
        return public(op)

    def scopes(self, project: str) -> dict[str, list[dict[str, Any]]]:
        """Every scope's operations ("zones/Z", "regions/R", "global"), oldest first: what
        globalOperations.aggregatedList answers (gcloud's ``operations list`` without a zone)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for key, op in sorted(self.ops.items(), key=lambda item: int(item[1]["id"])):
            parts = key.split("/")
            if parts[1] == project:
                out.setdefault("/".join(parts[2:-2]), []).append(public(op))
        return out

    def listing(self, project: str, zone: str, scope: str = "zones") -> list[dict[str, Any]]:
        """The operations of a zone (or region, or "global" with ``zone`` empty), oldest first:
        zoneOperations.list (compute.v1.json), which gcloud's ``operations list`` reads."""
        where = f"{scope}/{zone}" if zone else scope
        prefix = f"projects/{project}/{where}/operations/"
        found = [op for key, op in self.ops.items() if key.startswith(prefix)]
        return [public(op) for op in sorted(found, key=lambda op: int(op["id"]))]
