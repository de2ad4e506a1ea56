"""Faults injected at the HTTP layer: the answers a request gets instead of being carried out."""

from __future__ import annotations

from typing import Any

from tpuwizard.sandbox import google
from tpuwizard.sandbox.faults import ConnectionDropped, Faults
from tpuwizard.sandbox.model import ApiError


def injected_error(faults: Faults, method: str, path: str, body: Any) -> ApiError | None:
    """The error a counted fault makes this request answer with, if one fires."""
    if faults.take("unavailable"):
        return ApiError(503, "UNAVAILABLE", "The service is currently unavailable.")
    if faults.take("unauthenticated"):
        return ApiError(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access "
            "token, login cookie or other valid authentication credential.",
        )
    project = path.split("/")[3] if path.count("/") >= 3 else "?"
    if faults.take("api_disabled"):
        return ApiError(
            403,
            "PERMISSION_DENIED",
            (
                f"Cloud TPU API has not been used in project {project} before or it is disabled. "
                "Enable it by visiting https://console.developers.google.com/apis/api/"
                f"tpu.googleapis.com/overview?project={project} then retry."
            ),
            [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "SERVICE_DISABLED",
                    "domain": "googleapis.com",
                    "metadata": {
                        "service": "tpu.googleapis.com",
                        "consumer": f"projects/{project}",
                    },
                }
            ],
        )
    if faults.take("forbidden"):
        return ApiError(
            403,
            "PERMISSION_DENIED",
            (
                f"Permission 'tpu.nodes.{'create' if method == 'POST' else 'list'}' denied on "
                f"'projects/{project}'."
            ),
            [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "IAM_PERMISSION_DENIED",
                    "domain": "tpu.googleapis.com",
                    "metadata": {"permission": "tpu.nodes.create"},
                }
            ],
        )
    if method == "GET" and faults.take("read_error"):
        return ApiError(500, "INTERNAL", "Internal error encountered.")
    creates = method == "POST" and path.endswith(("/nodes", "/queuedResources"))
    if creates and faults.take("quota"):
        zone = path.split("/")[5] if path.count("/") >= 5 else "?"
        node = body if path.endswith("/nodes") else spec_node(body)
        spot = bool(node.get("schedulingConfig", {}).get("spot")) or (
            isinstance(body, dict) and ("spot" in body or "provisioningModel" in body)
        )
        return google.quota_exceeded(project, zone, str(node.get("acceleratorType", "")), spot)
    if creates and faults.take("create_rate"):
        return google.create_rate_exceeded()
    if creates and faults.no_act_as:
        node = body if path.endswith("/nodes") else spec_node(body)
        account = node.get("serviceAccount") if isinstance(node, dict) else None
        if isinstance(account, dict):  # attaching an account needs actAs (gb:45)
            return google.act_as_denied(project, str(account.get("email") or ""))
    return None


def spec_node(body: Any) -> dict[str, Any]:
    try:
        return dict(body["tpu"]["nodeSpec"][0]["node"])
    except (KeyError, IndexError, TypeError):
        return {}


def answer_lost(faults: Faults, handler: str) -> None:
    """After a create of the TPU API (a ``create_`` handler) was carried out and saved: its answer
    lost on the way back (lost_create: a 503), or the connection reset with no answer
    (reset_create)."""
    if not handler.startswith("create_"):
        return
    if faults.take("lost_create"):
        raise ApiError(503, "UNAVAILABLE", "The service is currently unavailable.")
    if faults.take("reset_create"):
        raise ConnectionDropped("create")
