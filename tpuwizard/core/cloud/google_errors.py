"""Reading Google's errors as they really arrive (reference/google-behaviour.md, "Errors as they
really arrive"): by the gRPC status code the exception carries and by Google's own texts, never
by the HTTP class alone (a REST 429 is a quota, a rate limit or a stockout).

Also the few facts about what Google offers that the client must know before it asks: where
Flex-start exists, and that tpu7x is not created through this API. These tables are the client's
own; the sandbox keeps its own copy, so the two cannot agree by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tpuwizard.core.cloud.backends import AUTO, COMPUTE, TPU_API
from tpuwizard.core.plan import catalog

# google-behaviour.md, Creating: Flex-start only for v6e in asia-northeast1-b and us-east5-a;
# v5e training in us-west4-a; v5e serving (single host: 1, 4 or 8 chips) in us-central1-a.
FLEX_OFFERS: dict[str, dict[str, str]] = {
    "v6e": {"asia-northeast1-b": "any", "us-east5-a": "any"},
    "v5e": {"us-west4-a": "training", "us-central1-a": "serving"},
}
TPU7X_MESSAGE = (
    "TPU7x is created through GKE or Compute Engine, not the Cloud TPU API "
    "(https://cloud.google.com/tpu/docs/tpus-in-compute-engine): use --backend compute."
)


def flex_zones(slice_: catalog.Slice | None, backend: str = TPU_API) -> list[str]:
    """Zones where Google offers Flex-start for ``slice_`` on ``backend`` (empty: nowhere, or an
    unknown type):
    one rule for the plan, the zone lists and the diagnoses. The TPU API's is its own table;
    on Compute Engine Flex-start is a provisioning model of the instance, so it is wherever the
    machine type is (no Compute Engine page limits Flex-start VMs to fewer zones). ``auto``: the
    backend the type has without a quota reading (Compute Engine only where the TPU API cannot
    make it)."""
    if slice_ is None:
        return []
    if backend == COMPUTE or (backend == AUTO and launchable(slice_)):
        return list(slice_.zones) if slice_.generation.machine_types else []
    out = []
    for zone, use in FLEX_OFFERS.get(slice_.generation.key, {}).items():
        if use != "serving" or slice_.chips in (1, 4, 8):
            out.append(zone)
    return out


def launchable(slice_: catalog.Slice | None, backend: str = TPU_API) -> str | None:
    """Why ``backend`` cannot create ``slice_`` for the generation's sake, or None when it can
    (or the type is unknown: None). TPU7x: Compute Engine (and ``auto``, which picks it for
    TPU7x) can; the TPU API cannot."""
    if slice_ is None:
        return None
    return TPU7X_MESSAGE if slice_.generation.key == "tpu7x" and backend == TPU_API else None


def grpc_code(err: BaseException) -> int | None:
    """The gRPC status code an api_core exception carries (8 for a stockout on an operation)."""
    status = getattr(err, "grpc_status_code", None)
    value = getattr(status, "value", None)
    if isinstance(value, tuple) and value and isinstance(value[0], int):
        return value[0]
    return None


def _message(err: BaseException) -> str:
    return str(getattr(err, "message", None) or err)


def capacity_refusal(err: BaseException, spot: bool = False) -> str | None:
    """Which way Google said "no capacity", or None. Every variant is a stockout."""
    message, code = _message(err), grpc_code(err)
    low = message.lower()
    if "quota" in low:
        return None
    if "no more capacity" in low or "stockout" in low:
        return "the zone is out of capacity (code 8)"
    if "insufficient reserved capacity" in low:
        return f"not enough reserved capacity (code {code or 9})"
    if spot and "reservation not found" in low:
        return "Google refused the spot request (code 5, 'Reservation not found')"
    if spot and (code == 13 or "internal error has occurred" in low):
        return "Google refused the spot request (code 13, an internal error)"
    if code == 8 and "capacity" in low:
        return "the zone is out of capacity (code 8)"
    return None


@dataclass(frozen=True)
class Quota:
    name: str
    region: str | None
    limit: str | None


QUOTA_RE = re.compile(
    r"Quota limit '(?P<name>[^']+)' has been exceeded\.(?: Limit: (?P<limit>[\d.]+))?"
    r"(?: in region (?P<region>[a-z0-9-]+))?"
)


def quota_refusal(err: BaseException) -> Quota | None:
    """A quota refusal ("Quota limit 'NAME' has been exceeded. Limit: 0 in region R."), with the
    name from the text or from a ``google.rpc.QuotaFailure`` detail. Not the per-minute limit on
    CreateNode requests: that is :func:`rate_limited`."""
    message = _message(err)
    if rate_limited(err):
        return None
    match = QUOTA_RE.search(message)
    if match:
        return Quota(match["name"], match["region"], match["limit"])
    for detail in getattr(err, "details", None) or []:
        violations = detail.get("violations") if isinstance(detail, dict) else None
        for violation in violations or []:
            if violation.get("description"):
                return Quota(str(violation["description"]), None, None)
    if "quota" in message.lower():
        legacy = re.search(r"[Qq]uota '([^']+)'", message)
        return Quota(legacy.group(1) if legacy else "", None, None)
    return None


def serving_bucket(quota: Quota, slice_: catalog.Slice | None) -> bool:
    """Single-host v5e (1/4/8 chips) counts against the small *serving* quota."""
    if "serving" in quota.name.lower():
        return True
    if slice_ is None:
        return False
    return slice_.generation.key == "v5e" and slice_.chips in (1, 4, 8)


def rate_limited(err: BaseException) -> bool:
    return "requests per minute" in _message(err).lower()


def location_unavailable(err: BaseException) -> bool:
    """403 "Location Z is not found or access is unauthorized.": this project may not use Z."""
    return "not found or access is unauthorized" in _message(err).lower()


def not_deletable_yet(err: BaseException) -> bool:
    """Google refuses a delete for a while right after create."""
    return "not in a deletable state" in _message(err).lower()


def needs_act_as(err: BaseException) -> bool:
    return "iam.serviceaccounts.actas" in _message(err).lower()
