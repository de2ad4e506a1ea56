"""Which zones offer which TPU types: live from the API (concurrently, cached) or documented."""

from __future__ import annotations

import hashlib
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard.core import paths, untrusted
from tpuwizard.core.cloud.google_errors import flex_zones, location_unavailable
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.routes import Route

CACHE_TTL_S = 6 * 3600
MAX_CACHE_BYTES = 4 * untrusted.MIB  # every zone's type names: tens of KiB
MAX_WORKERS = 16  # bounded: the API allows plenty, but a laptop's connection pool does not
# A zone's failure when Google says the project may not use it: the same answer every time.
NOT_AVAILABLE = "not available to your project"
OFFERED_NOTE = (
    "Offered is not the same as free capacity right now: a create can still fail with a stockout."
)


@dataclass
class ZoneSurvey:
    source: str  # "live" or "documented"
    zones: dict[str, list[str]]
    cached: bool = False
    failures: dict[str, str] = field(default_factory=dict)  # zone -> error, for live surveys

    @property
    def refused(self) -> list[str]:
        """The zones Google says the project may not use (no TPU can be made there)."""
        return sorted(z for z, why in self.failures.items() if why == NOT_AVAILABLE)

    def offering(self, accelerator: str) -> list[str]:
        return [zone for zone, types in self.zones.items() if accelerator in types]

    def narrowed(self, accelerator: str | None) -> dict[str, list[str]]:
        if not accelerator:
            return self.zones
        return {z: [accelerator] for z in self.offering(accelerator)}


@dataclass(frozen=True)
class RouteZone:
    """A zone that offers the type, as one route sees it: its price there, why the route cannot
    use it (empty when it can), and whether the catalog's source leaves the zone unconfirmed."""

    zone: str
    price: cost.ZonePrice
    unusable: str = ""
    unconfirmed: bool = False


def route_zones(
    slice_: catalog.Slice,
    route: str,
    offering: list[str],
    unconfirmed: frozenset[str] = frozenset(),
) -> list[RouteZone]:
    """The zones in ``offering`` as ``route`` sees them: those it can use first, the cheapest
    first and the ``unconfirmed`` ones after the rest (among equal prices, ``offering``'s order
    stands: the zone that lately had capacity first); then those it cannot use, with why."""
    usable = offering
    reason = ""
    if route == Route.FLEX:
        where = flex_zones(slice_)
        usable = [z for z in offering if z in where]
        reason = f"no Flex-start here (only {', '.join(where)})" if where else "no Flex-start"
    rows = [
        RouteZone(z, cost.zone_price(slice_, route, z), unconfirmed=z in unconfirmed)
        for z in usable
    ]
    rows.sort(key=lambda r: (r.unconfirmed, _price_key(r.price)))  # stable: keeps ties' order
    rest = [z for z in offering if z not in usable]
    return rows + [
        RouteZone(z, cost.zone_price(slice_, route, z), reason, z in unconfirmed) for z in rest
    ]


def cheapest_first(slice_: catalog.Slice, route: str, zones: list[str]) -> list[str]:
    """``zones`` by ``route``'s price there, the cheapest first; ties keep their order."""
    return sorted(zones, key=lambda z: _price_key(cost.zone_price(slice_, route, z)))


def _price_key(price: cost.ZonePrice) -> float:
    """A figure, or the most it can be (Flex-start), to compare by; none at all sorts last."""
    figure = price.hourly if price.hourly is not None else price.at_most
    return figure if figure is not None else float("inf")


def unconfirmed_zones(survey: ZoneSurvey, slice_: catalog.Slice | None) -> frozenset[str]:
    """The zones of a documented survey where no generation shown there is confirmed (the
    catalog's source lists them without confirming); a live survey is Google's own answer."""
    if survey.source != "documented":
        return frozenset()
    gens = [slice_.generation] if slice_ is not None else list(catalog.generations().values())
    confirmed = {z for g in gens for z in g.zones if z not in g.zones_unconfirmed}
    named = slice_.name if slice_ is not None else None
    return frozenset(z for z in survey.narrowed(named) if z not in confirmed)


def documented() -> ZoneSurvey:
    return ZoneSurvey("documented", catalog.documented_zone_table())


def _cache_file(cloud: TpuCloud) -> Path:
    key = hashlib.sha256(f"{cloud.endpoint}|{cloud.project}".encode()).hexdigest()[:12]
    return paths.cache_dir() / f"zones-{key}.json"


def _saved_survey(cache: Path) -> dict[str, Any] | None:
    """The survey saved at ``cache``, read as untrusted input (core/untrusted.py): a regular
    file, bounded; its time not in the future (it would be fresh for ever), every zone a list of
    type names. None when it is not: a damaged or foreign cache is simply refreshed."""
    try:
        saved = untrusted.read_json(cache, MAX_CACHE_BYTES, max_depth=8)
        zones, failures = saved["zones"], saved.get("failures", {})
        fine = (
            untrusted.sane_time(saved["at"])
            and isinstance(zones, dict)
            and all(isinstance(v, list) for v in zones.values())
            and all(isinstance(t, str) for v in zones.values() for t in v)
            and isinstance(failures, dict)
            and all(isinstance(v, str) for v in failures.values())
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return {"at": saved["at"], "zones": zones, "failures": failures} if fine else None


def live(
    cloud: TpuCloud, refresh: bool = False, max_workers: int = MAX_WORKERS, ttl: float = CACHE_TTL_S
) -> ZoneSurvey:
    """List the project's TPU zones, then every zone's accelerator types at once."""
    cache = _cache_file(cloud)
    if not refresh and cache.exists():
        saved = _saved_survey(cache)
        if saved is not None and time.time() - saved["at"] < ttl:
            return ZoneSurvey("live", saved["zones"], cached=True, failures=saved["failures"])
    zones = cloud.list_zones()
    table: dict[str, list[str]] = {}
    failures: dict[str, str] = {}
    lasting = True  # every failure is a zone this project may not use: a stable answer
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(zones) or 1))) as pool:
        futures = {zone: pool.submit(cloud.accelerator_types, zone) for zone in zones}
        for zone, future in futures.items():
            try:
                table[zone] = sorted(future.result(), key=_type_order)
            except Exception as err:  # one zone failing must not hide the others
                unavailable = location_unavailable(err)
                # Google's 403 for a zone the project may not use says so at length, with URLs.
                failures[zone] = NOT_AVAILABLE if unavailable else f"{type(err).__name__}: {err}"
                lasting = lasting and unavailable
    if not table and failures:
        # Nothing answered: let the caller diagnose the first error.
        raise next(iter(futures.values())).exception()  # type: ignore[misc]
    if lasting:  # whole or not at all, replacing what is there (a FIFO would block a write)
        temporary = cache.with_suffix(f".{os.getpid()}.tmp")
        try:
            survey = {"at": time.time(), "zones": table, "failures": failures}
            temporary.write_text(json.dumps(survey))
            os.replace(temporary, cache)
        except OSError:
            pass  # the next survey asks again
        finally:
            temporary.unlink(missing_ok=True)
    return ZoneSurvey("live", dict(sorted(table.items())), failures=failures)


def _type_order(name: str) -> tuple[str, int]:
    prefix, _, number = name.rpartition("-")
    return (prefix, int(number) if number.isdigit() else 0)
