"""The sandbox's locations: which zones exist, which answer, and what each offers (gb:28-34, :44).

Plain functions of Google's tables in :mod:`tpuwizard.sandbox.google`: they hold no state, so every
part of the sandbox that checks a zone calls them directly.
"""

from __future__ import annotations

import math
from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google
from tpuwizard.sandbox.model import GENERATION_ENUM, ApiError

# gcloud's `--type` and `--topology` (flags.yaml: node.acceleratorConfig.type and .topology) ask for
# chips in a shape instead of a type name: v4 and v5p as AxBxC, the others as AxB (docs:
# types-topologies "v4 ... 3-tuple"; supported-tpu-configurations "a string with the format AxB").
TOPOLOGY_DIMENSIONS = {"v2": 2, "v3": 2, "v4": 3, "v5e": 2, "v5p": 3, "v6e": 2}


def zones() -> list[str]:
    return google.location_ids()


def require_zone(project: str, zone: str) -> None:
    if zone in google.FORBIDDEN_ZONES:  # google-behaviour.md:44
        raise google.location_forbidden(zone)
    if zone not in google.api_zone_table():
        raise ApiError(
            404, "NOT_FOUND", f"Location projects/{project}/locations/{zone} was not found."
        )


def accelerator_types(zone: str) -> list[dict[str, Any]]:
    out = []
    for name in google.api_zone_table()[zone]:
        entry: dict[str, Any] = {"type": name}
        enum = GENERATION_ENUM.get(catalog.parse_accelerator(name).generation.key)
        if enum:
            entry["acceleratorConfigs"] = [{"type": enum}]
        out.append(entry)
    return out


def runtime_versions(zone: str) -> list[str]:
    offered = {
        catalog.parse_accelerator(n).generation.runtime_version
        for n in google.api_zone_table()[zone]
    }
    return sorted(offered)


def node_accelerator(node: dict[str, Any]) -> str:
    """The accelerator type a node asks for: its ``acceleratorType``, or the type its
    ``acceleratorConfig`` comes to (the product of its topology is its chips)."""
    named = str(node.get("acceleratorType") or "")
    config = node.get("acceleratorConfig")
    if not config:
        return named
    kind, topology = str(config.get("type", "")), str(config.get("topology", ""))
    key = {enum: key for key, enum in GENERATION_ENUM.items()}.get(kind)
    dims = topology.split("x")
    # The wording is the sandbox's: Google's text for these refusals is not on record.
    if key is None or len(dims) != TOPOLOGY_DIMENSIONS[key] or not all(d.isdigit() for d in dims):
        shape = "AxBxC" if TOPOLOGY_DIMENSIONS.get(key or "") == 3 else "AxB"
        raise ApiError(
            400,
            "INVALID_ARGUMENT",
            f"Invalid acceleratorConfig: type '{kind}' with topology '{topology}' "
            f"(a type of {', '.join(GENERATION_ENUM.values())}, its topology as {shape}).",
        )
    name = catalog.generations()[key].name_for_chips(math.prod(int(d) for d in dims))
    if named and named != name:
        raise ApiError(
            400,
            "INVALID_ARGUMENT",
            f"acceleratorType '{named}' and acceleratorConfig {kind} {topology} ({name}) differ: "
            "give one of them.",
        )
    return name
