"""Names, shapes and errors shared by the sandbox's state model and its server."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

NODE_ID_RE = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
OP_TYPE = "type.googleapis.com/google.cloud.tpu.{version}.OperationMetadata"
RESPONSE_TYPE = "type.googleapis.com/google.cloud.tpu.{version}.{kind}"
EMPTY_TYPE = "type.googleapis.com/google.protobuf.Empty"
DELETE_SECONDS = 0.2
UPDATE_SECONDS = 0.2
GENERATION_ENUM = {
    "v2": "V2",
    "v3": "V3",
    "v4": "V4",
    "v5e": "V5LITE_POD",
    "v5p": "V5P",
    "v6e": "V6E",
}


def worker_home(home: Path, node_name: str, worker: int) -> Path:
    """Each VM of a sandbox node has a home folder; its remote commands run there."""
    _, project, _, zone, _, node_id = node_name.split("/")
    return home / "workers" / project / zone / node_id / f"w{worker}"


# Not part of Google's API: where a sandbox node's workers live on this machine. The server
# answers it, because worker folders belong to the server's home, not the client's (two homes
# can share one `sandbox serve`), as a real VM's disk belongs to the VM.
WORKERS_RE = re.compile(
    r"^/sandbox/v1/(?P<name>projects/[^/]+/locations/[^/]+/nodes/[^/:]+):workers$"
)


def worker_locations(home: Path, nodes: dict[str, Any], name: str) -> dict[str, Any]:
    """Each worker's folder of the READY node ``name``; a 404 for any other."""
    from tpuwizard.core.plan import catalog

    node = nodes.get(name)
    if node is None or node.get("state") != "READY":
        raise ApiError(404, "NOT_FOUND", f"Resource '{name}' was not found or is not READY.")
    vms = catalog.parse_accelerator(node["acceleratorType"]).vms
    return {"homes": [str(worker_home(home, name, w)) for w in range(vms)]}


class ApiError(Exception):
    """An error the server answers with a Google-style body."""

    def __init__(
        self, http: int, status: str, message: str, details: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(message)
        self.http, self.status, self.message, self.details = http, status, message, details or []


def now_iso(t: float | None = None) -> str:
    return (
        datetime.fromtimestamp(t if t is not None else time.time(), UTC)
        .isoformat()
        .replace("+00:00", "Z")
    )


def parse_duration(text: str) -> float:
    """A protobuf Duration in JSON ("3600s") -> seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(text))
    if not match:
        raise ApiError(400, "INVALID_ARGUMENT", f"Invalid duration '{text}': use e.g. '3600s'.")
    return float(match.group(1))


def page(items: list[Any], key: str, query: dict[str, str]) -> dict[str, Any]:
    """One page of a list answer: ``pageSize`` items (50 by default) from ``pageToken`` on."""
    size = int(query.get("pageSize") or 0) or 50
    start = int(query.get("pageToken") or 0)
    out: dict[str, Any] = {key: items[start : start + size]}
    if start + size < len(items):
        out["nextPageToken"] = str(start + size)
    return out


def error_body(
    http: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Google's JSON error: ``{"error": {code, message, status, details}}``."""
    return {"error": {"code": http, "message": message, "status": status, "details": details or []}}


def public(record: dict[str, Any]) -> dict[str, Any]:
    """A stored node or operation as Google answers it: without the sandbox's own ``_`` keys."""
    return {k: v for k, v in record.items() if not k.startswith("_")}
