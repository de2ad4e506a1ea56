"""Which backend serves a launch: the support matrix (each cell sourced), the ``auto`` rule, the
Compute Engine quota a route draws on, and the documented per-zone offer.

Google serves TPUs two ways (backends.py): the Cloud TPU API and Compute Engine instances. Which
generation goes where is Google's decision, written down in the pages cited below; which one a
launch takes, when both serve it, is ours: Compute Engine (where new work goes, and whose
``maxRunDuration`` is a deadline Google enforces) when its quota covers the slice, else the TPU
API. The two draw on separate quota pools (compute-engine.md, "report"; Google's
tpu/docs/consumption-options), so TPU API quota says nothing about Compute Engine's.

This module sits in core/cloud, beside backends.py, rather than in core/plan: core/cloud
imports the catalog, and the core's rooms may not import each other in a cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tpuwizard.core.cloud import quota_ids
from tpuwizard.core.cloud.backends import AUTO, BACKENDS, CHOICES, COMPUTE, TPU_API, Backend
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog

TPU_MACHINES = "cloud.google.com/compute/docs/tpus/tpu-machines"
_COMPUTE_TPUS = (
    f"Compute Engine's TPU machines are TPU7x, v6e and v5p only ({TPU_MACHINES}, read 2026-12-01)"
)
_BOTH = (
    "the TPU API's accelerator types and Compute Engine's machine types both list it "
    f"(cloud.google.com/tpu/docs/{{gen}}; {TPU_MACHINES}, read 2026-12-01)"
)


@dataclass(frozen=True)
class Support:
    """Who serves a generation, why in a clause a user reads, where Google says so (``source``,
    in full) and the one page a message points to (``cite``)."""

    backends: tuple[str, ...]
    why: str
    source: str
    cite: str


# The support matrix. A generation served by Compute Engine has machine types in catalog.toml
# (a test holds the two together).
SUPPORT: dict[str, Support] = {
    **{
        gen: Support(
            (TPU_API,), "Compute Engine has no machine type for it", _COMPUTE_TPUS, TPU_MACHINES
        )
        for gen in ("v2", "v3", "v4")
    },
    "v5e": Support(
        (TPU_API,),
        "legacy API only; Compute Engine refuses its ct5lp machine types with a 403",
        "Google's TPU Builders guide (2026-07) lists v5e as legacy API only; instances.insert "
        "with ct5lp-hightpu-4t is refused: 'This user agent is not allowed to use the machine "
        f"type' (reports, reference/compute-engine.md); {_COMPUTE_TPUS}",
        TPU_MACHINES,
    ),
    "v5p": Support((TPU_API, COMPUTE), "served by both", _BOTH.format(gen="v5p"), TPU_MACHINES),
    "v6e": Support((TPU_API, COMPUTE), "served by both", _BOTH.format(gen="v6e"), TPU_MACHINES),
    "tpu7x": Support(
        (COMPUTE,),
        "new generations, starting with TPU7x, come only through Compute Engine or GKE",
        "cloud.google.com/tpu/docs/tpus-in-compute-engine (via reference/compute-engine.md); "
        "cloud.google.com/tpu/docs/queued-resources: 'For Ironwood (TPU7x), you must use GKE'; "
        "docs.cloud.google.com/tpu/docs/tpu7x: 'you can use GKE or Compute Engine' (2026-12-01)",
        "cloud.google.com/tpu/docs/queued-resources",
    ),
}

_NAMES: dict[str, str] = {TPU_API: "the TPU API", COMPUTE: "Compute Engine"}
_ROUTE_WORDS = {"vm": "on-demand", "on-demand": "on-demand", "spot": "spot", "flex": "Flex-start"}
# Why auto keeps a multi-host slice on the TPU API where both serve it: there it is one node;
# on Compute Engine it is a MIG whose VMs' max run duration is no deadline for the slice (the MIG
# may make them again), so only tpuwizard's own teardown ends it. --backend compute asks for it.
_MULTI_HOST = (
    "on Compute Engine a slice is a MIG that Google's max run duration does not end "
    "(--backend compute to use it anyway)"
)


@dataclass(frozen=True)
class BackendChoice:
    backend: Backend  # Backend.TPU_API or Backend.COMPUTE
    reason: str  # why, in words a user reads ("auto: v6e-4 on Compute Engine: ...")
    source: str  # where Google documents the cell of the matrix this rests on
    short: str = ""  # auto's reason in a few words, for a line of 80x24 ("its quota here ...")


def support_for(slice_: catalog.Slice) -> Support:
    """The support matrix's cell for a slice's generation."""
    return SUPPORT[slice_.generation.key]


def choose_backend(
    s: catalog.Slice,
    route: str,
    asked: str,
    compute_quota_chips: int | None,
    region: str | None = None,
) -> BackendChoice:
    """Which backend serves the slice ``s`` on ``route`` (vm, spot, flex): the one ``asked``
    (``--backend tpu-api|compute``), or by the ``auto`` rule. ``compute_quota_chips`` is the
    room left in the route's Compute Engine quota in the region (compute_quota_metric), None
    where there is no reading. Raises BadInput for an impossible pair, saying what to type."""
    if asked not in CHOICES:
        raise BadInput(f"--backend must be one of {', '.join(CHOICES)}; got '{asked}'.")
    if route not in _ROUTE_WORDS:
        raise BadInput(f"Unknown route '{route}': the routes are vm, spot and flex.")
    support = SUPPORT[s.generation.key]
    if asked != AUTO:
        _check_possible(s, support, asked)
        reason = f"{_NAMES[asked]} (you asked for it with --backend)"
        return BackendChoice(Backend(asked), reason, support.source)
    if support.backends == (TPU_API,):
        reason = (
            f"auto: {_NAMES[TPU_API]}: Google serves {s.generation.key} only there ({support.why})"
        )
        return BackendChoice(TPU_API, reason, support.source)
    if support.backends == (COMPUTE,):
        _check_possible(s, support, COMPUTE)
        reason = (
            f"auto: {_NAMES[COMPUTE]}: Google serves {s.generation.key} only there ({support.why})"
        )
        return BackendChoice(COMPUTE, reason, support.source)
    return _by_quota(s, route, compute_quota_chips, region, support)


def _by_quota(
    s: catalog.Slice, route: str, room: int | None, region: str | None, support: Support
) -> BackendChoice:
    """Both backends serve it: Compute Engine when its quota is known to cover the chips."""
    where = f"in {region}" if region else "in this region"
    quota = f"{_ROUTE_WORDS[route]} quota"
    if not s.single_host:
        why = f"{s.name} is a multi-host slice ({s.vms} VMs), and {_MULTI_HOST}"
        short = "a multi-host slice is one node there"
    elif room is None:
        why = f"no Compute Engine quota reading for {s.generation.key} {where}"
        short = "no Compute Engine quota reading"
    elif room >= s.chips:
        reason = (
            f"auto: {s.name} on Compute Engine: its {quota} {where} covers {s.chips} chips "
            f"(room for {room})"
        )
        short = f"its quota here covers {s.chips} chips"
        return BackendChoice(COMPUTE, reason, support.source, short)
    else:
        why = (
            f"Compute Engine's {quota} for {s.generation.key} {where} has room for {room} "
            f"chip{'s' if room != 1 else ''}, and {s.name} needs {s.chips}"
        )
        short = f"Compute Engine has quota for {room} of {s.chips} chips"
    return BackendChoice(TPU_API, f"auto: the TPU API: {why}", support.source, short)


def _check_possible(s: catalog.Slice, support: Support, backend: str) -> None:
    gen = s.generation.key
    if backend not in support.backends:
        if backend == COMPUTE:
            raise BadInput(
                f"{s.name} has no Compute Engine machine type (Google serves {gen} through the "
                f"TPU API only: {support.why}; {support.cite}). "
                "Use --backend tpu-api or --backend auto."
            )
        raise BadInput(
            f"{s.name} is not served by the TPU API ({support.why}; {support.cite}). "
            "Use --backend compute or --backend auto."
        )
    if backend == COMPUTE and not s.single_host and s.one_vm.machine_type is None:
        raise BadInput(
            f"{s.name} is a multi-host slice ({s.vms} VMs of {s.chips_per_vm} chips), and "
            f"Compute Engine has no machine type for one such VM of {gen}."
        )


def compute_quota_metric(s: catalog.Slice, route: str) -> tuple[str, dict[str, str]] | None:
    """The Compute Engine quota ``route`` (vm, spot, flex) draws on for the slice ``s``'s
    generation: its metric and dimensions (besides the region), or None where no source names it
    (TPU7x) or Compute Engine does not serve the generation. The likeliest of
    quota_ids.compute_candidates (the preflight reads them all, by name)."""
    if route not in _ROUTE_WORDS:
        raise BadInput(f"Unknown route '{route}': the routes are vm, spot and flex.")
    if COMPUTE not in SUPPORT[s.generation.key].backends:
        return None
    found = quota_ids.compute_candidates(s.generation.key, route)
    return (found[0].quota_id, found[0].dimension_map) if found else None


@dataclass(frozen=True)
class ZoneOffer:
    """A zone and the backends that can launch the type there, each with where that is known
    from: ``live`` (the survey asked) or ``documented`` (the catalog)."""

    zone: str
    backends: tuple[tuple[str, str], ...]  # (backend, source), in BACKENDS order


def zone_offers(
    s: catalog.Slice,
    tpu_api_zones: Iterable[str],
    tpu_api_source: str,
    ai_zones: Iterable[str] = (),
) -> list[ZoneOffer]:
    """Per zone, which backends offer the slice ``s``: the TPU API where the zone survey found
    it (``tpu_api_source``: live or documented), Compute Engine where the catalog documents the
    generation and it has a machine type for the slice's VM (a multi-host slice is a MIG of
    them), labelled documented; ``ai_zones`` (the catalog's AI zones a live zone list showed:
    ai_zones.visible_ai_zones) count as documented zones of the generation too."""
    support = SUPPORT[s.generation.key]
    found: dict[str, dict[str, str]] = {}
    if TPU_API in support.backends:
        for zone in tpu_api_zones:
            found.setdefault(zone, {})[TPU_API] = tpu_api_source
    if COMPUTE in support.backends and s.one_vm.machine_type is not None:
        for zone in (*s.zones, *(z for z in ai_zones if z in s.generation.ai_zones)):
            found.setdefault(zone, {})[COMPUTE] = "documented"
    return [
        ZoneOffer(zone, tuple((b, by[b]) for b in BACKENDS if b in by))
        for zone, by in sorted(found.items())
    ]
