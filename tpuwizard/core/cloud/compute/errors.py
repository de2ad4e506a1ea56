"""Compute Engine's errors as they arrive: an operation that ends with ``error.errors[]`` (each
with a ``code`` such as ``ZONE_RESOURCE_POOL_EXHAUSTED`` or ``QUOTA_EXCEEDED``, compute.v1.json's
``Operation``), or an HTTP refusal of the call itself whose words say the same. Read here into
plain facts that :mod:`~tpuwizard.core.cloud.diagnose.compute` words; no Google import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tpuwizard.core.cloud.google_errors import Quota

# Operation error codes that mean "no capacity in this zone now" (Google's resource-error page;
# the _WITH_DETAILS variant carries the zone and machine type in errorDetails).
CAPACITY_CODES = frozenset(
    {"ZONE_RESOURCE_POOL_EXHAUSTED", "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS"}
)
# tpuwizard's code (not Google's) for a slice whose MIG reports its topology ACTIVE_DEGRADED or
# FAILED: not every VM got its TPUs, which means too little capacity for the whole slice.
DEGRADED_CODE = "TPUWIZARD_TOPOLOGY_DEGRADED"
# tpuwizard's code for a resize request whose insert Google refused (the course's Route 2B; users
# report "Creating resize requests for managed instance group with TPU is not allowed").
REQUEST_REFUSED_CODE = "TPUWIZARD_RESIZE_REQUEST_REFUSED"
QUOTA_CODE = "QUOTA_EXCEEDED"
INTERNAL_CODE = "INTERNAL_ERROR"
# Compute's quota words: "Quota 'TPUS_PER_TPU_FAMILY' exceeded.  Limit: 0.0 in region us-east5."
# (or "... globally."), on a refused call and in an operation's error alike.
_QUOTA_RE = re.compile(
    r"Quota '(?P<name>[^']+)' exceeded\.\s*(?:Limit: (?P<limit>[\d.]+))?"
    r"(?:\s*in region (?P<region>[a-z0-9-]+))?"
)
# v5e's machine types have no Compute Engine path (compute-engine.md, "Why it matters").
NO_PATH_TEXT = "not allowed to use the machine type"


@dataclass(frozen=True)
class QuotaFacts:
    """A quota refusal: ``quota`` as the TPU side has it, and Compute's quota id (its
    ``limitName``, what ``gcloud quotas preferences create --quota-id`` takes) when it says."""

    quota: Quota
    quota_id: str | None = None


class OperationError(Exception):
    """A Compute Engine operation that ended with an error.

    ``errors`` are its ``error.errors[]`` as JSON-like dicts ({code, message, errorDetails});
    ``after`` the last instance status seen before it ended ("STAGING": an INTERNAL_ERROR after
    minutes in STAGING means no capacity in practice, compute-engine.md, "Reports"); ``doing``
    what the operation was ("create", "delete").
    """

    def __init__(
        self,
        operation: str,
        errors: list[dict[str, Any]],
        http_status: int | None = None,
        after: str | None = None,
        doing: str = "create",
    ) -> None:
        self.operation, self.errors, self.http_status = operation, errors, http_status
        self.after, self.doing = after, doing
        words = "; ".join(f"{e.get('code', '?')}: {e.get('message', '')}" for e in errors)
        super().__init__(words or f"the operation {operation} failed")

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(str(e.get("code") or "") for e in self.errors)

    @property
    def message(self) -> str:
        return str(self)


def operation_errors(op: Any) -> list[dict[str, Any]]:
    """``error.errors[]`` of a compute_v1 ``Operation`` as plain dicts ([] when none)."""
    out: list[dict[str, Any]] = []
    for e in op.error.errors if op.error else []:
        details = []
        for d in e.error_details:
            if d.quota_info and (d.quota_info.metric_name or d.quota_info.limit_name):
                q = d.quota_info
                details.append(
                    {
                        "quotaInfo": {
                            "metricName": q.metric_name,
                            "limitName": q.limit_name,
                            "dimensions": dict(q.dimensions),
                            "limit": q.limit,
                        }
                    }
                )
        out.append({"code": e.code, "message": e.message, "errorDetails": details})
    return out


def raise_delete_errors(final: Any) -> None:
    """A DONE delete operation that failed raises; one whose target was already gone
    (RESOURCE_NOT_FOUND) is the delete's wish come true."""
    errors = [e for e in operation_errors(final) if e["code"] != "RESOURCE_NOT_FOUND"]
    if errors:
        code = final.http_error_status_code or None
        raise OperationError(final.name, errors, code, doing="delete")


def capacity_refused(err: BaseException) -> bool:
    """No capacity in the zone: the code on an operation, or in the words of a refused call."""
    if isinstance(err, OperationError):
        if any(code in CAPACITY_CODES or code == DEGRADED_CODE for code in err.codes):
            return True
        # INTERNAL_ERROR after STAGING: Google found no TPU to start the VM on (report).
        return err.after == "STAGING" and INTERNAL_CODE in err.codes
    return any(code in _text(err) for code in CAPACITY_CODES) or (
        "is currently unavailable in the" in _text(err)
    )


def quota_refused(err: BaseException) -> QuotaFacts | None:
    """A Compute Engine quota refusal, with the quota's name, region and id where given."""
    entries = err.errors if isinstance(err, OperationError) else []
    for entry in entries:
        if entry.get("code") == QUOTA_CODE:
            return _quota_facts(str(entry.get("message") or ""), entry.get("errorDetails") or [])
    # A refused call: only Compute's own words (the TPU API's "Quota limit 'X' has been
    # exceeded" is the TPU side's diagnosis, with its own advice).
    text = _text(err)
    if isinstance(err, OperationError) or not _QUOTA_RE.search(text):
        return None
    return _quota_facts(text, [])


def _quota_facts(message: str, details: list[dict[str, Any]]) -> QuotaFacts:
    match = _QUOTA_RE.search(message)
    name = match["name"] if match else ""
    region = match["region"] if match else None
    limit = match["limit"] if match else None
    quota_id = None
    for detail in details:
        info = detail.get("quotaInfo") or {}
        quota_id = info.get("limitName") or quota_id
        region = region or (info.get("dimensions") or {}).get("region")
        name = name or str(info.get("metricName") or "").rsplit("/", 1)[-1]
        if limit is None and info.get("limit") is not None:
            limit = f"{float(info['limit']):g}"
    return QuotaFacts(Quota(name, region, limit), quota_id)


def no_compute_path(err: BaseException) -> bool:
    """403 "This user agent is not allowed to use the machine type [ct5lp-hightpu-4t]"."""
    return NO_PATH_TEXT in _text(err)


def resource_not_ready(err: BaseException) -> bool:
    """Compute refuses a delete while another operation on the instance runs ("The resource
    '...' is not ready", reason resourceNotReady): asking again later succeeds."""
    text = _text(err).lower()
    return "is not ready" in text or "resourcenotready" in text


def _text(err: BaseException) -> str:
    reason = str(getattr(err, "reason", None) or "")
    return f"{getattr(err, 'message', None) or err} {reason}"
