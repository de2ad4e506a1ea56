"""The Cloud Billing Catalog in the sandbox: ``GET /v1/services/SERVICE/skus`` in the REST shape of
Google's API reference (cloud.google.com/billing/docs/reference/rest/v1/services.skus/list: a
``skus[]`` page and ``nextPageToken``; each Sku with name, skuId, description, category,
serviceRegions, pricingInfo[].pricingExpression.tieredRates[].unitPrice {currencyCode, units,
nanos}, serviceProviderName, geoTaxonomy).

It serves the offline table's sourced figures, never invented ones: for v5e, v5p and v6e, per
region, on-demand and spot, only where core/plan/catalog.toml has a figure for that zone or region
(its [zone_prices], from Google's SKU data via skypilot-catalog); a region whose only figure is
the generation's list price gets no SKU, as a region missing from Google's catalog would. The
table has no Flex-start figure, so no Flex-start SKU is served, except under the fault key
``flex_sku_reported=1``: the one figure users report reading ("DWS Defined Duration V6e", $1.35
per chip-hour in us-east5; issue 33), a report, not a Google page. Descriptions carry the words
readers match ("TpuV6e", SkyPilot's fetch_gcp.py; a spot one as users quote it, "TpuV6e attached
to Spot Preemptible VMs"); the rest of each description is the sandbox's own. Faults:
``sku_missing=GEN:MODEL[@REGION]`` drops SKUs; ``billing_unauthenticated=1`` answers 401; the
Cloud Billing API off is ``disabled_services=cloudbilling.googleapis.com`` (403 SERVICE_DISABLED).
"""

from __future__ import annotations

import hashlib
from typing import Any

from tpuwizard.core.plan import catalog, cost
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import ApiError

COMPUTE_SERVICE = "6F81-5844-456A"
_WORD = {"v5e": "V5e", "v5p": "V5p", "v6e": "V6e"}
_MODELS = (("vm", "on-demand"), ("spot", "spot"))
# (generation, USD per chip-hour, regions) of Flex-start SKUs as users report them: served only
# under flex_sku_reported=1.
REPORTED_FLEX = (("v6e", 1.35, ["us-east5"]),)
EFFECTIVE = "2026-11-29T00:00:00Z"  # the offline table's price date
MAX_PAGE = 5000


def _figures() -> dict[tuple[str, str, float], list[str]]:
    """(generation, model, USD per chip-hour) -> the regions the offline table gives it for."""
    out: dict[tuple[str, str, float], list[str]] = {}
    for gen in _WORD:
        g = catalog.generations()[gen]
        accelerator = g.name_for_chips(g.chips_per_vm)  # one VM's slice: v6e-4, v5p-8
        slice_ = catalog.parse_accelerator(accelerator)
        chips = slice_.chips
        for route, model in _MODELS:
            seen: set[str] = set()
            for zone in (*g.zones, *g.ai_zones):
                region = zone.rsplit("-", 1)[0]
                price = cost.offline_zone_price(slice_, route, zone)
                if region in seen or price.hourly is None or price.note:
                    continue  # the list price only: no SKU of its own for this region
                seen.add(region)
                per_chip = round(price.hourly / chips, 6)
                out.setdefault((gen, model, per_chip), []).append(region)
    return out


def skus(faults: Faults) -> list[dict[str, Any]]:
    """Every TPU SKU the sandbox's Compute Engine service lists, after ``sku_missing``."""
    out = []
    for (gen, model, usd), regions in sorted(_figures().items()):
        kept = [r for r in sorted(regions) if not _dropped(faults, gen, model, r)]
        if kept:
            out.append(_sku(gen, model, usd, kept))
    if faults.flex_sku_reported:
        for gen, usd, regions in REPORTED_FLEX:
            kept = [r for r in regions if not _dropped(faults, gen, "flex", r)]
            if kept:
                out.append(_sku(gen, "flex", usd, kept))
    return out


def _dropped(faults: Faults, gen: str, model: str, region: str) -> bool:
    return any((g, m) == (gen, model) and r in ("", region) for g, m, r in faults.missing_skus)


def _sku(gen: str, model: str, usd: float, regions: list[str]) -> dict[str, Any]:
    word = f"Tpu{_WORD[gen]}"
    description = {
        "spot": f"{word} attached to Spot Preemptible VMs",
        "flex": f"DWS Defined Duration {_WORD[gen]}",  # as users quote it (issue 33)
    }.get(model, word)
    digest = hashlib.sha256(f"{description}|{','.join(regions)}".encode()).hexdigest().upper()
    sku_id = f"{digest[:4]}-{digest[4:8]}-{digest[8:12]}"
    units = int(usd)
    return {
        "name": f"services/{COMPUTE_SERVICE}/skus/{sku_id}",
        "skuId": sku_id,
        "description": description,
        "category": {
            "serviceDisplayName": "Compute Engine",
            "resourceFamily": "Compute",
            "resourceGroup": "TPU",
            "usageType": "Preemptible" if model == "spot" else "OnDemand",
        },
        "serviceRegions": regions,
        "pricingInfo": [
            {
                "summary": "",
                "pricingExpression": {
                    "usageUnit": "h",
                    "displayQuantity": 1,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": round((usd - units) * 1e9),
                            },
                        }
                    ],
                    "usageUnitDescription": "hour",
                    "baseUnit": "s",
                    "baseUnitDescription": "second",
                    "baseUnitConversionFactor": 3600,
                },
                "currencyConversionRate": 1,
                "effectiveTime": EFFECTIVE,
            }
        ],
        "serviceProviderName": "Google",
        "geoTaxonomy": {"type": "REGIONAL", "regions": regions},
    }


def list_skus(faults: Faults, service: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """One page of ``service``'s SKUs (pageSize at most 5000, pageToken an offset)."""
    if faults.billing_unauthenticated:
        raise ApiError(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential.",
        )
    if service != COMPUTE_SERVICE:
        every: list[dict[str, Any]] = []  # the sandbox prices no other service
    else:
        every = skus(faults)
    try:
        size = min(int((query.get("pageSize") or [str(MAX_PAGE)])[0]) or MAX_PAGE, MAX_PAGE)
        start = int((query.get("pageToken") or ["0"])[0] or 0)
    except ValueError:
        raise ApiError(400, "INVALID_ARGUMENT", "pageSize and pageToken must be numbers.") from None
    page = every[start : start + size]
    more = start + size < len(every)
    return {"skus": page, "nextPageToken": str(start + size) if more else ""}
