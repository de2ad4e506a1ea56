"""The sandbox's locations: which zones exist, which answer, and what each offers (gb:28-34, :44).

Plain functions of Google's tables in :mod:`tpuwizard.sandbox.google`: they hold no state, so every
part of the sandbox that checks a zone calls them directly.
"""

from __future__ import annotations

from typing import Any

from tpuwizard.core.plan import catalog
from tpuwizard.sandbox import google
from tpuwizard.sandbox.model import GENERATION_ENUM, ApiError


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
