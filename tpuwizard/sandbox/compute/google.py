"""How Google's Compute Engine behaves for single-host TPU VMs, as the sandbox does it by default.

Every rule cites ``reference/compute-engine.md`` ("ce:LINE"), the researched account of what
Compute Engine documents and what users report, or Google's page it names. As with
:mod:`tpuwizard.sandbox.google`, nothing here is shared with the client (``tpuwizard.core.cloud``),
and no address here is ever reached outside loopback.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox.google import internal_address
from tpuwizard.sandbox.model import ApiError

BASE = "https://compute.googleapis.com/compute/v1/"


@dataclass(frozen=True)
class TpuMachineType:
    name: str
    generation: str  # the catalog's generation key
    chips: int
    guest_cpus: int
    memory_mb: int
    family: str  # the quota's tpu_family dimension (ce:25)


# ce:14 the TPU machine families on Compute Engine: TPU7x, v6e, v5p, not v5e. The machine types
# are the ones named at ce:19-21. vCPU and memory are as Google's TPU machines page lists them
# (compute/docs/tpus/tpu-machines), not checked from this workplace: nothing tpuwizard does reads
# them.
MACHINE_TYPES = (
    TpuMachineType("ct6e-standard-1t", "v6e", 1, 44, 180_224, "CT6E"),
    TpuMachineType("ct6e-standard-4t", "v6e", 4, 180, 737_280, "CT6E"),
    TpuMachineType("ct6e-standard-8t", "v6e", 8, 180, 1_474_560, "CT6E"),
    TpuMachineType("ct5p-hightpu-4t", "v5p", 4, 208, 458_752, "CT5P"),
    TpuMachineType("tpu7x-standard-4t", "tpu7x", 4, 224, 983_040, "TPU7X"),
)
# ce:14-16 "reports show HTTPError 403: This user agent is not allowed to use the machine type
# [ct5lp-hightpu-4t]": v5e's machine types are refused, whatever the zone.
REFUSED_PREFIXES = ("ct5lp-",)
# TPU7x is granted through the account team (docs.cloud.google.com/tpu/docs/tpu7x-training:
# "get access to TPU7x ... contact your account team"). What Google answers a project without
# access is on no page we have: the fault no_tpu7x_access assumes a 403, UNCONFIRMED, with words
# of the sandbox's own that say so (a client must key on the code, never on this text).
TPU7X_PREFIX = "tpu7x-"


def tpu7x_access_refused(machine: str) -> ApiError:
    return ApiError(
        403,
        "forbidden",
        f"[tpuwizard sandbox, unconfirmed] The project has no access to machine type "
        f"[{machine}]: Google's exact answer is unpublished; 403 is the code assumed.",
    )


# Google's limit-vm-runtime page (ce:40-42): 30 s to 120 days; Flex-start at most 7 days.
MIN_RUN_S = 30
MAX_RUN_S = 120 * 24 * 3600
FLEX_MAX_RUN_S = 7 * 24 * 3600
# ce:45 the Flex-start queue wait is at most 2 h (GA announcement, 2025-09-25).
FLEX_MAX_WAIT_S = 2 * 3600
# Numeric ids (uint64, a string in JSON): instances, operations, zones and machine types.
ID_BASE = 3_000_000_000_000_000_000


def zone_table() -> dict[str, list[TpuMachineType]]:
    """Zone -> the TPU machine types offered there: where the catalog documents the generation
    (the same table the TPU API side is built from), so the two backends agree on where a
    generation exists (ce:17-18: v5p and v6e on both, TPU7x here only)."""
    table: dict[str, list[TpuMachineType]] = {}
    documented = catalog.documented_zone_table()
    for zone, ai_types in catalog.documented_ai_zone_table().items():  # AI zones too (gb:32)
        documented.setdefault(zone, []).extend(ai_types)
    for zone, types in sorted(documented.items()):
        generations = {catalog.parse_accelerator(t).generation.key for t in types}
        offered = [m for m in MACHINE_TYPES if m.generation in generations]
        if offered:
            table[zone] = offered
    return table


def machine_type(zone: str, name: str) -> TpuMachineType | None:
    return next((m for m in zone_table().get(zone, []) if m.name == name), None)


def region_of(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def stable_id(text: str) -> str:
    """A fixed uint64 for a name that Google would number (zones, machine types)."""
    return str(ID_BASE + int(hashlib.sha256(text.encode()).hexdigest(), 16) % 10**18)


def zone_url(project: str, zone: str) -> str:
    return f"{BASE}projects/{project}/zones/{zone}"


def zone_resource(project: str, zone: str) -> dict[str, Any]:
    return {
        "kind": "compute#zone",
        "id": stable_id(zone),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": zone,
        "description": zone,
        "status": "UP",
        "region": f"{BASE}projects/{project}/regions/{region_of(zone)}",
        "selfLink": zone_url(project, zone),
        "availableCpuPlatforms": ["AMD Genoa", "Intel Sapphire Rapids"],
        "supportsPzs": False,
    }


def machine_type_resource(project: str, zone: str, m: TpuMachineType) -> dict[str, Any]:
    return {
        "kind": "compute#machineType",
        "id": stable_id(f"{zone}/{m.name}"),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": m.name,
        "description": f"{m.guest_cpus} vCPUs, {m.memory_mb // 1024} GB RAM, {m.chips} TPU chips",
        "guestCpus": m.guest_cpus,
        "memoryMb": m.memory_mb,
        "maximumPersistentDisks": 128,
        "maximumPersistentDisksSizeGb": "263168",
        "zone": zone,  # MachineType.zone is the zone's name, not its URL (compute.v1.json)
        "selfLink": f"{zone_url(project, zone)}/machineTypes/{m.name}",
        "isSharedCpu": False,
        "architecture": "X86_64",
    }


def network_interface(asked: dict[str, Any], external: bool) -> dict[str, Any]:
    """``networkInterfaces[0]`` as read back (ce:34-36): the internal address in ``networkIP``,
    the external one in ``accessConfigs[0].natIP`` only when the create asked for an
    ONE_TO_ONE_NAT access config. Both are loopback addresses, as the TPU nodes' are
    (:func:`tpuwizard.sandbox.google.endpoints`): only the external one has the paired sshd."""
    from tpuwizard.sandbox.google import EXTERNAL_ADDRESS

    out: dict[str, Any] = {
        "kind": "compute#networkInterface",
        "name": "nic0",
        "network": str(asked.get("network") or f"{BASE}projects/-/global/networks/default"),
        "networkIP": internal_address(0),
        "stackType": "IPV4_ONLY",
    }
    if external:
        out["accessConfigs"] = [
            {
                "kind": "compute#accessConfig",
                "type": "ONE_TO_ONE_NAT",
                "name": "External NAT",
                "natIP": EXTERNAL_ADDRESS,
                "networkTier": "PREMIUM",
            }
        ]
    return out


def wants_external(body: dict[str, Any]) -> bool:
    interfaces = body.get("networkInterfaces") or [{}]
    configs = interfaces[0].get("accessConfigs") or []
    return any(c.get("type", "ONE_TO_ONE_NAT") == "ONE_TO_ONE_NAT" for c in configs)


def external_ip_forbidden(project: str, zone: str, name: str) -> ApiError:
    """An insert asking for an external IP where the org policy compute.vmExternalIpAccess denies
    it: HTTP 412 conditionNotMet, Google's text as reported (googlecodelabs/feedback#695,
    gardener/gardener-extension-provider-gcp#415: "Error 412: Constraint
    constraints/compute.vmExternalIpAccess violated for project N. Add instance ... to the
    constraint to use external IP with it., conditionNotMet")."""
    from tpuwizard.sandbox.google import project_number

    return ApiError(
        412,
        "conditionNotMet",
        f"Constraint constraints/compute.vmExternalIpAccess violated for project "
        f"{project_number(project)}. Add instance projects/{project}/zones/{zone}/instances/"
        f"{name} to the constraint to use external IP with it.",
    )


def stockout_error(project: str, zone: str) -> dict[str, Any]:
    """ce:59-61 an insert with no capacity: the operation ends DONE with this code. The text is
    Compute Engine's (as gcloud prints it)."""
    return {
        "code": "ZONE_RESOURCE_POOL_EXHAUSTED",
        "message": (
            f"The zone 'projects/{project}/zones/{zone}' does not have enough resources "
            "available to fulfill the request.  Try a different zone, or try again later."
        ),
    }


def quota_metric(m: TpuMachineType, model: str) -> tuple[str, str, dict[str, str]]:
    """ce:22-25 (report): SPOT and FLEX_START draw on the preemptible TPU quota of the generation,
    STANDARD on the family quota. (quota name in the message, limit name, dimensions)."""
    if model in ("SPOT", "FLEX_START"):
        generation = m.generation.upper()
        return (
            f"PREEMPTIBLE_TPU_{generation}",
            f"PREEMPTIBLE-TPU-{generation}-per-project-region",
            {},
        )
    if m.generation == "v5p":
        # A user's `gcloud quotas info` shows v5p with its own pair (backend_choice.py's source):
        # TPU-V5P-per-project-region for STANDARD, not the family quota.
        return ("TPU_V5P", "TPU-V5P-per-project-region", {})
    return (
        "TPUS_PER_TPU_FAMILY",
        "TPUS-PER-TPU-FAMILY-per-project-region",
        {"tpu_family": m.family},
    )


def quota_error(zone: str, m: TpuMachineType, model: str, limit: float = 0.0) -> dict[str, Any]:
    """ce:59-61 QUOTA_EXCEEDED in an operation's ``error.errors[]``, naming the metric and the
    region, with the QuotaExceededInfo detail compute.v1.json defines."""
    quota, limit_name, dimensions = quota_metric(m, model)
    region = region_of(zone)
    return {
        "code": "QUOTA_EXCEEDED",
        "message": f"Quota '{quota}' exceeded.  Limit: {limit:.1f} in region {region}.",
        "errorDetails": [
            {
                "quotaInfo": {
                    "metricName": f"compute.googleapis.com/{quota.lower()}",
                    "limitName": limit_name,
                    "dimensions": dict(dimensions, region=region),
                    "limit": limit,
                }
            }
        ],
    }


def flex_wait_expired(project: str, zone: str) -> dict[str, Any]:
    """ce:43-46 ``params.requestValidForDuration`` bounds the wait for capacity; when it passes
    the create fails (ce:62-63 "a failed Flex-start create deletes itself"). Google's exact code for
    this is not in the reference: the sandbox answers as a stockout, which is what it is."""
    return stockout_error(project, zone)


def internal_error() -> dict[str, Any]:
    # ce:63-64 "an INTERNAL_ERROR after minutes in STAGING means no capacity in practice".
    return {
        "code": "INTERNAL_ERROR",
        "message": "Internal error. Please try again or contact Google Support. "
        "(Code: '-5134225785628311548')",
    }


def has_nat(cloud_nat: set[str], region: str) -> bool:
    return "*" in cloud_nat or region in cloud_nat


def nat_routers(project: str, region: str, cloud_nat: set[str]) -> list[dict[str, Any]]:
    """The routers of ``region``: one with a Cloud NAT for every subnet when the fault says so
    (Router and RouterNat as compute.v1.json defines them), else none."""
    if not has_nat(cloud_nat, region):
        return []
    link = f"{BASE}projects/{project}/regions/{region}/routers/practice-nat-router"
    return [
        {
            "kind": "compute#router",
            "id": stable_id(f"{region}/practice-nat-router"),
            "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
            "name": "practice-nat-router",
            "region": f"{BASE}projects/{project}/regions/{region}",
            "network": f"{BASE}projects/{project}/global/networks/default",
            "selfLink": link,
            "nats": [
                {
                    "name": "practice-nat",
                    "type": "PUBLIC",
                    "natIpAllocateOption": "AUTO_ONLY",
                    "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
                    "enableEndpointIndependentMapping": False,
                }
            ],
        }
    ]


def region_resource(
    project: str, region: str, zones: list[str], quotas: list[dict[str, Any]]
) -> dict[str, Any]:
    """A Region as compute.v1.json defines it (``quotas[]``: metric, limit, usage)."""
    return {
        "kind": "compute#region",
        "id": stable_id(region),
        "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
        "name": region,
        "description": region,
        "status": "UP",
        "zones": [zone_url(project, z) for z in zones],
        "quotas": quotas,
        "selfLink": f"{BASE}projects/{project}/regions/{region}",
    }


def default_firewalls(project: str) -> list[dict[str, Any]]:
    """The default network's prepopulated ingress rules (Google's VPC firewall docs: the default
    network has default-allow-internal, -ssh, -rdp and -icmp): SSH from 0.0.0.0/0, which holds
    IAP's 35.235.240.0/20."""
    network = f"{BASE}projects/{project}/global/networks/default"
    rules = [
        ("default-allow-internal", ["10.128.0.0/9"], [{"IPProtocol": "tcp", "ports": ["0-65535"]}]),
        ("default-allow-ssh", ["0.0.0.0/0"], [{"IPProtocol": "tcp", "ports": ["22"]}]),
        ("default-allow-rdp", ["0.0.0.0/0"], [{"IPProtocol": "tcp", "ports": ["3389"]}]),
        ("default-allow-icmp", ["0.0.0.0/0"], [{"IPProtocol": "icmp"}]),
    ]
    return [
        {
            "kind": "compute#firewall",
            "id": stable_id(f"firewall/{name}"),
            "name": name,
            "network": network,
            "priority": 65534,
            "direction": "INGRESS",
            "sourceRanges": ranges,
            "allowed": allowed,
            "disabled": False,
            "selfLink": f"{BASE}projects/{project}/global/firewalls/{name}",
        }
        for name, ranges, allowed in rules
    ]


def unreachable_warning(scope: str) -> dict[str, Any]:
    """A scope's warning in an aggregated list when Google cannot reach it (fault
    ``unreachable``): its items are left out, and nothing says there are none."""
    message = f"Scope '{scope}' is unreachable: its resources could not be listed."
    return {"code": "UNREACHABLE", "message": message, "data": [{"key": "scope", "value": scope}]}
