"""TPU quotas in the sandbox: what Cloud Quotas answers for them, and the creates that exceed them.

Two services hold TPU quota, in separate pools (compute-engine.md:22-25): the Cloud TPU API
(quota ids in Google's naming, gb:42 ``TPUV6EPreemptiblePerProjectPerRegionForTPUAPI``, built by
:func:`tpuwizard.sandbox.google.quota_name`) and Compute Engine (``PREEMPTIBLE-TPU-V6E-per-project-
region`` for SPOT and FLEX_START, ``TPUS-PER-TPU-FAMILY-per-project-region`` with ``tpu_family``
for STANDARD, :func:`tpuwizard.sandbox.compute.google.quota_metric`). Every limit counts chips, per
region. The fault ``quota_limit=QUOTA[@REGION]:N`` sets one; unset, a limit is
:data:`DEFAULT_LIMIT`. The QuotaInfo shape is Cloud Quotas v1's REST reference
(cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.services.quotaInfos): no
discovery document for it ships with google-api-python-client, and it reports no usage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google
from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.locations import node_accelerator
from tpuwizard.sandbox.model import ApiError

TPU_SERVICE = "tpu.googleapis.com"
COMPUTE_SERVICE = "compute.googleapis.com"
# Generous: more chips than any slice in the catalog, many times over, so that no launch of the
# existing tests meets a limit it did not ask for.
DEFAULT_LIMIT = 100_000
# A node or instance in these states holds no chips.
RELEASED = ("PREEMPTED", "TERMINATED", "STOPPED")


@dataclass(frozen=True)
class Quota:
    service: str
    quota_id: str
    metric: str
    family_dimension: bool  # defined on tpu_family as well as region


def quotas(service: str) -> list[Quota]:
    """Every TPU quota ``service`` defines in the sandbox."""
    if service == TPU_SERVICE:
        types = {t for ts in google.api_zone_table().values() for t in ts}
        ids = sorted({google.quota_name(t, spot) for t in types for spot in (False, True)})
        return [Quota(TPU_SERVICE, q, f"{TPU_SERVICE}/{_metric_word(q)}", False) for q in ids]
    if service == COMPUTE_SERVICE:
        found: dict[str, Quota] = {}
        for m in ce.MACHINE_TYPES:
            for model in ("SPOT", "STANDARD"):
                name, limit_name, dimensions = ce.quota_metric(m, model)
                metric = f"{COMPUTE_SERVICE}/{name.lower()}"  # as ce.quota_error names it
                found[limit_name] = Quota(COMPUTE_SERVICE, limit_name, metric, bool(dimensions))
        return sorted(found.values(), key=lambda q: q.quota_id)
    return []


def _metric_word(quota_id: str) -> str:
    """A lower-case metric for a TPU API quota id; Google's exact metric names for these are not
    in the reference, so the sandbox's are its own: the id without its common ending."""
    return quota_id.removesuffix("PerProjectPerRegionForTPUAPI").lower()


def find(service: str, quota_id: str) -> Quota | None:
    return next((q for q in quotas(service) if q.quota_id == quota_id), None)


def regions(service: str) -> list[str]:
    table = google.api_zone_table() if service == TPU_SERVICE else ce.zone_table()
    return sorted({ce.region_of(zone) for zone, types in table.items() if types})


def families() -> list[str]:
    return sorted({m.family for m in ce.MACHINE_TYPES})


def limit(faults: Faults, quota_id: str, region: str) -> int:
    """The limit of ``quota_id`` in ``region``: the fault's for that region, else its for every
    region, else the default."""
    limits = faults.quota_limits
    return limits.get((quota_id, region), limits.get((quota_id, ""), DEFAULT_LIMIT))


def quota_info(faults: Faults, project: str, quota: Quota) -> dict[str, Any]:
    """One QuotaInfo: a dimensionsInfo per region (and per family, for a family quota)."""
    number = google.project_number(project)
    infos: list[dict[str, Any]] = []
    for region in regions(quota.service):
        value = str(limit(faults, quota.quota_id, region))  # int64: a string in JSON
        for family in families() if quota.family_dimension else [None]:
            dimensions = {"region": region} | ({"tpu_family": family} if family else {})
            infos.append(
                {
                    "dimensions": dimensions,
                    "details": {"value": value},
                    "applicableLocations": [region],
                }
            )
    defined_on = ["region", "tpu_family"] if quota.family_dimension else ["region"]
    return {
        "name": f"projects/{number}/locations/global/services/{quota.service}"
        f"/quotaInfos/{quota.quota_id}",
        "quotaId": quota.quota_id,
        "metric": quota.metric,
        "service": quota.service,
        "isPrecise": True,
        "containerType": "PROJECT",
        "dimensions": defined_on,
        "metricDisplayName": quota.metric.split("/", 1)[1],
        "quotaDisplayName": quota.quota_id,
        "metricUnit": "1",
        "quotaIncreaseEligibility": {"isEligible": True},
        "isFixed": False,
        "dimensionsInfos": infos,
        "isConcurrent": False,
        "serviceRequestQuotaUri": "https://console.cloud.google.com/iam-admin/quotas"
        f"?project={project}",
    }


# --- creates that would exceed a limit ---------------------------------------------------------


def node_quota(accelerator: str, preemptible: bool) -> str:
    return google.quota_name(accelerator, preemptible)


def tpu_api_in_use(data: dict[str, Any], project: str, region: str, quota_id: str) -> int:
    """Chips the TPU API's nodes of ``project`` hold in ``region`` against ``quota_id``."""
    used = 0
    for name, node in data["nodes"].items():
        _, node_project, _, zone, *_ = name.split("/")
        if node_project != project or ce.region_of(zone) != region:
            continue
        if node.get("state") in RELEASED:
            continue
        preemptible = bool(node.get("_preemptible") or node.get("schedulingConfig", {}).get("spot"))
        accelerator = str(node["acceleratorType"])
        if node_quota(accelerator, preemptible) == quota_id:
            used += catalog.parse_accelerator(accelerator).chips
    for name, qr in data["queued"].items():
        # A request still waiting for its node is counted too, so requests made at once (a
        # fan-out) cannot together take more than the limit.
        _, qr_project, _, zone, *_ = name.split("/")
        if qr_project != project or ce.region_of(zone) != region or "_node" in qr:
            continue
        if qr.get("state", {}).get("state") in ("FAILED", "SUSPENDED"):
            continue
        try:
            node = dict(qr["tpu"]["nodeSpec"][0]["node"])
            accelerator = queued_accelerator(node)
        except (KeyError, IndexError, TypeError, ValueError, ApiError):
            continue
        if node_quota(accelerator, queued_preemptible(qr)) == quota_id:
            used += catalog.parse_accelerator(accelerator).chips
    return used


def queued_preemptible(qr: dict[str, Any]) -> bool:
    """Spot and Flex-start draw on preemptible quota (gb:26 "It draws on preemptible quota")."""
    return qr.get("spot") is not None or qr.get("provisioningModel") == "FLEX_START"


def queued_accelerator(node: dict[str, Any]) -> str:
    return node_accelerator(node)


def refuse_tpu_api_create(
    faults: Faults,
    data: dict[str, Any],
    project: str,
    zone: str,
    accelerator: str,
    preemptible: bool,
) -> None:
    """Raise gb:42's 429 when the chips asked for do not fit in what the quota leaves."""
    region = ce.region_of(zone)
    quota_id = node_quota(accelerator, preemptible)
    cap = limit(faults, quota_id, region)
    wanted = catalog.parse_accelerator(accelerator).chips
    if tpu_api_in_use(data, project, region, quota_id) + wanted > cap:
        raise quota_exceeded(project, region, quota_id, cap)


def quota_exceeded(project: str, region: str, quota_id: str, cap: int) -> ApiError:
    """gb:42, with the limit that was met (``google.quota_exceeded`` says the same with 0)."""
    return ApiError(
        429,
        "RESOURCE_EXHAUSTED",
        f"Quota limit '{quota_id}' has been exceeded. Limit: {cap} in region {region}.",
        [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"subject": f"projects/{project}", "description": quota_id}],
            }
        ],
    )


def compute_over_limit(
    faults: Faults,
    instances: dict[str, Any],
    project: str,
    zone: str,
    machine: ce.TpuMachineType,
    model: str,
) -> float | None:
    """The limit an insert of ``machine`` under ``model`` would exceed; None if it fits."""
    region = ce.region_of(zone)
    _, quota_id, dimensions = ce.quota_metric(machine, model)
    used = compute_in_use(instances, project, region, quota_id, dimensions)
    cap = limit(faults, quota_id, region)
    return float(cap) if used + machine.chips > cap else None


def compute_in_use(
    instances: dict[str, Any], project: str, region: str, quota_id: str, dimensions: dict[str, str]
) -> int:
    """Chips the project's instances in ``region`` hold against ``quota_id`` (and its
    dimensions): every one not stopped or terminated."""
    used = 0
    for key, record in instances.items():
        _, rec_project, _, rec_zone, *_ = key.split("/")
        if rec_project != project or ce.region_of(rec_zone) != region:
            continue
        if record.get("status") in RELEASED:
            continue
        other = ce.machine_type(rec_zone, str(record.get("machineType", "")).rsplit("/", 1)[-1])
        if other is None:
            continue
        other_model = str(record.get("scheduling", {}).get("provisioningModel", "STANDARD"))
        _, other_id, other_dimensions = ce.quota_metric(other, other_model)
        if (other_id, other_dimensions) == (quota_id, dimensions):
            used += other.chips
    return used


# compute.v1.json (revision 20261106) ``Quota.metric``: its only TPU values. A Region's
# ``quotas[]`` names nothing else for TPUs (a test reads the enum), so the sandbox never answers a
# metric Google does not publish (such as PREEMPTIBLE_TPU_V6E: no metric counts v6e, v5p or TPU7x).
REGION_TPU_METRICS = (
    "PREEMPTIBLE_TPU_LITE_DEVICE_V5",
    "PREEMPTIBLE_TPU_LITE_PODSLICE_V5",
    "PREEMPTIBLE_TPU_PODSLICE_V4",
    "TPU_LITE_DEVICE_V5",
    "TPU_LITE_PODSLICE_V5",
    "TPU_PODSLICE_V4",
)


def region_metric_quota_id(metric: str) -> str:
    """The Cloud Quotas id whose limit a Region reports for ``metric``: its name in Cloud Quotas'
    spelling (TPU_LITE_PODSLICE_V5 -> TPU-LITE-PODSLICE-V5-per-project-region, the id users report
    for v5e), so ``quota_limit=`` sets both."""
    return metric.replace("_", "-") + "-per-project-region"


def region_quotas(faults: Faults, project: str, region: str) -> list[dict[str, Any]]:
    """A Region's ``quotas[]`` (compute.v1.json's Quota: metric, limit, usage, as doubles) for
    the TPU metrics of the enum. Their usage is 0: they count v5e and v4, and the sandbox's
    Compute Engine makes neither (it refuses ct5lp- machine types and has none for v4)."""
    return [
        {
            "metric": metric,
            "limit": float(limit(faults, region_metric_quota_id(metric), region)),
            "usage": 0.0,
        }
        for metric in REGION_TPU_METRICS
    ]
