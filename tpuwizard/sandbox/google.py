"""How Google behaves, as the sandbox does it by default.

Every rule here cites its line in ``reference/google-behaviour.md`` ("gb:LINE"), the researched
account of what Google's TPU API really does. The sandbox is Google's stand-in, not tpuwizard's:
none of these tables is shared with the client (``tpuwizard.core.cloud``), so the two cannot agree
by construction. No address here is ever reached outside loopback.
"""

from __future__ import annotations

from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox.model import ApiError

# gb:32 "Zones include AI zones such as us-central1-ai1a, us-central1-ai1, us-south1-ai1b". What
# each offers is the catalog's ai_zones (a report); Google hides them from zone lists until the
# project turns on AI zone visibility, and a request naming one is still served (manage-ai-zones:
# visibility "doesn't restrict API endpoints"): the fault ai_zones_visible=1 lists them.
AI_ZONES = tuple(catalog.documented_ai_zone_table())


def listed(zones: list[str], ai_zones_visible: bool) -> list[str]:
    """``zones`` as a zone list shows them: without the AI zones unless they are visible."""
    return [z for z in zones if ai_zones_visible or z not in AI_ZONES]


# gb:44 "listing a zone answers 403 Location europe-west1-b is not found or access is
# unauthorized." One such zone is in every sandbox project's location list.
FORBIDDEN_ZONES = ("europe-west1-b",)
# gb:28 "tpu7x is not available through the Cloud TPU API ... the v2 AcceleratorConfig.type enum
# ends at V6E".
NOT_IN_THIS_API = ("tpu7x",)
# gb:23-27 Flex-start "only for: v6e in asia-northeast1-b and us-east5-a; v5e *training* in
# us-west4-a; v5e *serving* in us-central1-a". Serving is the single-host v5e (1/4/8 chips), gb:42.
FLEX_OFFERS: dict[str, dict[str, str]] = {
    "v6e": {"asia-northeast1-b": "any", "us-east5-a": "any"},
    "v5e": {"us-west4-a": "any", "us-central1-a": "serving"},
}
# gb:11-16: without enableExternalIps a worker has only an internal address. The sandbox models
# it as a loopback address where nothing listens (the sandbox's sshd binds 127.0.0.1 only), so a
# laptop that tries it is refused and no packet ever leaves this machine.
EXTERNAL_ADDRESS = "127.0.0.1"
# gb:33-34 "v2-32 and larger exist only in us-central1-a and europe-west4-a; v3-32 and larger
# only in europe-west4-a".
POD_ZONES = {"v2": ("us-central1-a", "europe-west4-a"), "v3": ("europe-west4-a",)}
POD_FROM = 32
# gb:47 "deleting while the resource is still being created can be refused": for this long at most
# (the sandbox's provisioning delay, if shorter).
UNDELETABLE_S = 5.0
# gb:49 "the node can be reachable before the API reports READY" (marin#6087): the workers boot
# this far into provisioning, while the API still says CREATING.
REACHABLE_AT = 0.5
# gb:57 and the API's Node.id: every node has a numeric id (int64, a string in JSON).
NODE_ID_BASE = 7_000_000_000_000_000_000


def internal_address(worker: int) -> str:
    """Worker ``worker``'s internal address: loopback, and nothing listens on it."""
    return f"127.0.0.{2 + worker % 250}"


def endpoints(vms: int, external: bool) -> list[dict[str, Any]]:
    """``networkEndpoints`` for a node of ``vms`` workers (gb:11 "decides whether each worker gets
    networkEndpoints[i].accessConfig.externalIp"). 8470 is the TPU runtime's port on Google."""
    out: list[dict[str, Any]] = []
    for worker in range(vms):
        endpoint: dict[str, Any] = {"ipAddress": internal_address(worker), "port": 8470}
        if external:
            endpoint["accessConfig"] = {"externalIp": EXTERNAL_ADDRESS}
        out.append(endpoint)
    return out


def api_zone_table() -> dict[str, list[str]]:
    """Zone -> accelerator types this API offers: the documented table without tpu7x (gb:28),
    plus the AI zones (gb:32)."""

    def is_pod(name: str) -> bool:
        prefix, _, number = name.rpartition("-")
        return prefix in POD_ZONES and int(number) >= POD_FROM

    def offered(name: str, zone: str) -> bool:
        if catalog.parse_accelerator(name).generation.key in NOT_IN_THIS_API:
            return False
        return not is_pod(name) or zone in POD_ZONES[name.rpartition("-")[0]]

    documented = catalog.documented_zone_table()
    for zone, types in catalog.documented_ai_zone_table().items():
        documented.setdefault(zone, []).extend(types)
    pods = {t for types in documented.values() for t in types if is_pod(t)}
    for generation, zones in POD_ZONES.items():  # gb:33-34: where pods are, whatever else is
        for zone in zones:
            documented.setdefault(zone, []).extend(
                t for t in sorted(pods) if t.startswith(generation + "-")
            )
    table = {
        zone: list(dict.fromkeys(t for t in types if offered(t, zone)))
        for zone, types in documented.items()
    }
    table = {zone: types for zone, types in table.items() if types}
    for zone in AI_ZONES:
        table.setdefault(zone, [])
    return dict(sorted(table.items()))


def location_ids() -> list[str]:
    """Every location the API lists for a project, including one it may not use (gb:44)."""
    return sorted([*api_zone_table(), *FORBIDDEN_ZONES])


def location_forbidden(zone: str) -> ApiError:
    # gb:44, word for word (gpuhunt#98).
    return ApiError(
        403, "PERMISSION_DENIED", f"Location {zone} is not found or access is unauthorized."
    )


def flex_offered(accelerator: str, zone: str) -> bool:
    """gb:23-27: Flex-start only for a few generations, zones and uses."""
    slice_ = catalog.parse_accelerator(accelerator)
    use = FLEX_OFFERS.get(slice_.generation.key, {}).get(zone)
    if use == "serving":
        return slice_.chips in (1, 4, 8)
    return use == "any"


def flex_refused(accelerator: str, zone: str) -> ApiError:
    return ApiError(
        400,
        "INVALID_ARGUMENT",
        f"Flex-start (provisioningModel FLEX_START) is not offered for {accelerator} in zone "
        f"{zone}.",
    )


def stockout(zone: str, code: int = 8) -> dict[str, Any]:
    """The error a create operation ends with when the zone has no capacity (gb:39-41)."""
    if code == 9:  # gb:40 reserved capacity
        return {
            "code": 9,
            "message": "Insufficient reserved capacity. Contact customer support to increase "
            "your reservation.",
        }
    if code == 13:  # gb:41 a refused spot create
        return {"code": 13, "message": "an internal error has occurred"}
    if code == 5:  # gb:41
        return {"code": 5, "message": "Reservation not found"}
    # gb:39, Google's text (SkyPilot's provisioner quotes it).
    return {
        "code": 8,
        "message": (
            f'There is no more capacity in the zone "{zone}"; you can try in another zone where '
            "Cloud TPU Nodes are offered (see https://cloud.google.com/tpu/docs/regions) "
            "[EID: 0x1a2b3c4d5e6f7081]"
        ),
    }


# v5e's TPU API quota ids, on-demand and preemptible (spot, Flex-start: gb:26), as users'
# `gcloud quotas info` reads name them (2025-26): "Litepod" after "Preemptible", not v6e's pattern.
# An id of the sandbox's own making here was one no preflight asks for (issue 55.7).
_V5E_QUOTA = {
    False: "TPUV5sLitepodPerProjectPerRegionForTPUAPI",
    True: "TPUV5sPreemptibleLitepodPerProjectPerRegionForTPUAPI",
}


def quota_name(accelerator: str, spot: bool) -> str:
    """A quota metric in Google's naming (gb:42 'TPUV6EPreemptiblePerProjectPerRegionForTPUAPI');
    single-host v5e on demand counts against the serving bucket (gb:42); ``spot``: preemptible
    quota, which Flex-start draws on too (gb:26)."""
    slice_ = catalog.parse_accelerator(accelerator)
    if slice_.generation.key == "v5e" and slice_.chips in (1, 4, 8) and not spot:
        return "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI"
    if slice_.generation.key == "v5e":
        return _V5E_QUOTA[spot]
    generation = slice_.generation.key.upper()
    return f"TPU{generation}{'Preemptible' if spot else ''}PerProjectPerRegionForTPUAPI"


def quota_exceeded(project: str, zone: str, accelerator: str, spot: bool) -> ApiError:
    """gb:42: HTTP 429 RESOURCE_EXHAUSTED with Google's text and a QuotaFailure detail."""
    region = zone.rsplit("-", 1)[0]
    name = quota_name(accelerator, spot) if accelerator else "TPUPerProjectPerRegionForTPUAPI"
    return ApiError(
        429,
        "RESOURCE_EXHAUSTED",
        f"Quota limit '{name}' has been exceeded. Limit: 0 in region {region}.",
        [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"subject": f"projects/{project}", "description": name}],
            }
        ],
    )


def create_rate_exceeded() -> ApiError:
    # gb:43 (marin#6198)
    return ApiError(
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for quota metric 'CreateNode requests' and limit 'Maximum number of "
        "CreateNode requests per minute' of service 'tpu.googleapis.com'.",
    )


def not_deletable(name: str) -> ApiError:
    # gb:47 "Resource is not in a deletable state" (python-docs-samples loops on it).
    return ApiError(
        400,
        "FAILED_PRECONDITION",
        f"Cannot delete {name}: Resource is not in a deletable state. Try again later.",
    )


def queued_has_nodes(qr_id: str) -> ApiError:
    # gb:48 refused without force=true unless its nodes are gone or it is ACCEPTED/FAILED/SUSPENDED.
    return ApiError(
        400,
        "FAILED_PRECONDITION",
        f"Queued resource {qr_id} has nodes that are not deleted: delete them first, or set "
        "force=true to delete them with it.",
    )


def queue_expired() -> dict[str, Any]:
    """gb:19 queueingPolicy.validUntilDuration: "the request will be failed" after it (gb:46 for
    where the reason goes: state.failedData.error)."""
    return {
        "code": 4,
        "message": "The queued resource was not provisioned before the end of its queueing "
        "policy (validUntilDuration).",
    }


# gb:45 "attaching a service account can need iam.serviceAccounts.actAs (role Service Account
# User)"; gb:62-68 the watchdog deletes with the VM's account, and "in organisations created since
# May 2024 the default compute service account has no roles by default". The sandbox's projects
# are older ones: the caller owns the project and the default compute account has roles/editor
# (as Google granted it before), unless the sa_no_delete fault takes that role away.
CALLER = "user:practice@example.com"
DEFAULT_ACCOUNT_DOMAIN = "-compute@developer.gserviceaccount.com"


def project_number(project: str) -> str:
    """Resource Manager's projects.get ``projectNumber``: 12 digits, fixed per project id."""
    import hashlib

    digest = int(hashlib.sha256(project.encode()).hexdigest(), 16)
    return str(100_000_000_000 + digest % 900_000_000_000)


def project_resource(project: str) -> dict[str, Any]:
    """Resource Manager v1 ``GET projects/P``."""
    return {
        "projectNumber": project_number(project),
        "projectId": project,
        "lifecycleState": "ACTIVE",
        "name": project,
    }


def iam_policy(project: str, account_may_delete: bool) -> dict[str, Any]:
    """Resource Manager v1 ``projects.getIamPolicy``: a Policy (version, etag, bindings)."""
    bindings: list[dict[str, Any]] = [{"role": "roles/owner", "members": [CALLER]}]
    account = f"serviceAccount:{project_number(project)}{DEFAULT_ACCOUNT_DOMAIN}"
    if account_may_delete:
        bindings.append({"role": "roles/editor", "members": [account]})
    return {"version": 1, "etag": "BwYAAAAAAAA=", "bindings": bindings}


def policy_forbidden(project: str) -> ApiError:
    # The caller lacks resourcemanager.projects.getIamPolicy: Google's 403 PERMISSION_DENIED.
    return ApiError(
        403,
        "PERMISSION_DENIED",
        f"The caller does not have permission to get the IAM policy of project {project} "
        "(resourcemanager.projects.getIamPolicy).",
    )


def act_as_denied(project: str, email: str) -> ApiError:
    """gb:45: a create that attaches a service account the caller may not act as (report)."""
    email = email or f"{project_number(project)}{DEFAULT_ACCOUNT_DOMAIN}"
    return ApiError(
        403,
        "PERMISSION_DENIED",
        f"The user does not have access to service account '{email}'. Ask a project owner to "
        "grant you the iam.serviceAccountUser role on the service account.",
    )


def external_ip_forbidden(project: str, resource: str) -> ApiError:
    """The org policy compute.vmExternalIpAccess denies external IPs and the create asks for one.
    Compute Engine's text (compute/google.py: external_ip_forbidden); the TPU API's own wording
    is not on record, so it is that text naming the node, as a FAILED_PRECONDITION."""
    return ApiError(
        400,
        "FAILED_PRECONDITION",
        f"Constraint constraints/compute.vmExternalIpAccess violated for project "
        f"{project_number(project)}. Add instance {resource} to the constraint to use external "
        "IP with it.",
    )
