"""Cloud Billing Catalog SKUs (the REST shape of ``services.skus.list``) read into per-chip-hour
prices by generation, provisioning model and region.

Which SKUs are TPUs, and how their descriptions name them, is from SkyPilot's GCP catalog fetcher
(sky/catalog/data_fetchers/fetch_gcp.py, read 2026-12-02): v5e, v5p and v6e (and later) are in
the Compute Engine service ``6F81-5844-456A`` as "TpuV5e", "TpuV5p", "TpuV6e", priced per chip-
hour, a spot SKU's description saying "Preemptible" (its usageType may still be "OnDemand");
v2, v3 and v4 are in the Cloud TPU service ``E000-3F24-B8AA``, priced per device or core, which
this reader does not read (the offline table covers them, labelled). Flex-start's SKUs are
named "DWS Defined Duration V6e" in users' reports (tpuwizard issue 33). No report names TPU7x's
SKU, so none is matched: its price stays "not in the catalog", with that reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from tpuwizard.core.prices.cache import FLEX, ON_DEMAND, SPOT, SkuPrice
from tpuwizard.core.untrusted import usable_amount

COMPUTE_SERVICE = "6F81-5844-456A"
TPU_SERVICE = "E000-3F24-B8AA"
# The description's word for each generation (SkyPilot's _get_tpu_description_str), and
# Flex-start's (issue 33's reports).
_GENERATION = re.compile(r"\bTpu(V5e|V5p|V6e)\b")
_FLEX = re.compile(r"\bDWS Defined Duration (V5e|V5p|V6e)\b")
# What is never a TPU's hourly price: commitments, reservations, sole tenancy.
_NOT_HOURLY = ("commit", "reserved", "sole tenancy")


def unit_price(sku: dict[str, Any]) -> float | None:
    """USD per usage unit of the SKU's first pricing: its last tier (the one past any free
    amount), units plus nanos; None when the SKU carries none, or is not priced per hour."""
    try:
        expression = sku["pricingInfo"][0]["pricingExpression"]
        if str(expression.get("usageUnit", "h")) != "h":
            return None
        price = expression["tieredRates"][-1]["unitPrice"]
        if str(price.get("currencyCode", "USD")) != "USD":
            return None
        return int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        return None


def classify(description: str) -> tuple[str, str] | None:
    """(generation, model) of a TPU SKU's description; None for anything else."""
    low = description.lower()
    if any(word in low for word in _NOT_HOURLY):
        return None
    flex = _FLEX.search(description)
    if flex:
        return flex.group(1).lower(), FLEX
    found = _GENERATION.search(description)
    if not found:
        return None
    model = SPOT if ("preemptible" in low or "spot" in low) else ON_DEMAND
    return found.group(1).lower(), model


def parse_skus(skus: Iterable[dict[str, Any]]) -> list[SkuPrice]:
    """Every TPU price in ``skus``: one per SKU and region it serves."""
    out: list[SkuPrice] = []
    for sku in skus:
        kind = classify(str(sku.get("description", "")))
        usage = str((sku.get("category") or {}).get("usageType", "OnDemand"))
        if kind is None or usage not in ("OnDemand", "Preemptible"):
            continue
        price = unit_price(sku)
        if not usable_amount(price):  # none, or no figure to price a TPU-hour by (0, below 0)
            continue
        generation, model = kind
        for region in sku.get("serviceRegions") or []:
            out.append(SkuPrice(generation, model, str(region), price, str(sku.get("skuId", ""))))
    return out
