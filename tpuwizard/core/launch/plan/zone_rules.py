"""The rules for a plan over several zones (``--zones``, ``--failover``, ``--fan-out``), before
any cloud call (zones_problems), and what each attempt sends.

Serial failover moves on after a create that fails fast. That is already what a vm create does
on both backends (a stockout ends its operation) and what a spot create does on Compute Engine
(``ZONE_RESOURCE_POOL_EXHAUSTED`` at once): that create *is* the probe, nothing else is sent. A
Flex-start create on Compute Engine waits for capacity, so there the probe is the same create
with a zero queue wait, which the client sends as Google's smallest, 90 s (compute/body.py). On
the TPU API spot and Flex-start are queued requests that wait in their zone's queue, so there is
nothing to fail over from: fan-out (every zone's request at once, the first granted kept) is the
way there.
"""

from __future__ import annotations

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud import gcloud_config, google_errors
from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.parts import Where
from tpuwizard.core.routes import Route


def zones_of(where: Where) -> tuple[str, ...]:
    """The zones a launch may create in, in order: ``--zones``, else its one zone."""
    return where.zones or (where.zone,)


def zones_from(zones: tuple[str, ...], zone: str) -> tuple[str, ...]:
    """``zones`` in their order, starting at ``zone`` and going round: after a preemption in
    the second zone of A,B,C a new node is made in B, then C, then A (the zones before it had no
    capacity when it was made). A zone not listed comes first, the list after it."""
    if zone not in zones:
        return (zone, *zones)
    at = zones.index(zone)
    return zones[at:] + zones[:at]


def fails_over(where: Where) -> bool:
    """Serial failover: after a stockout, the next zone (``--zones``' next, or any offering)."""
    return (where.failover or len(where.zones) > 1) and not where.fan_out


def probes(where: Where) -> bool:
    """Does each attempt send the probe's zero queue wait (Compute Engine Flex-start, serial)?"""
    return fails_over(where) and where.backend == COMPUTE and where.route == Route.FLEX


def zones_problems(where: Where, queue_wait_minutes: float | None) -> list[Said]:
    """Why ``where``'s zones cannot be used as asked (with the Flex-start queue wait asked);
    empty when they can."""
    found: list[Said] = []
    for zone in sorted({z for z in where.zones if where.zones.count(z) > 1}):
        found.append(f"{zone} is listed more than once in --zones: list each zone once.")
    bad = []
    for zone in where.zones:
        try:
            gcloud_config.validate_zone(zone)
        except BadInput as err:
            bad.append(zone)
            found.append(str(err))
    if where.zones and where.zone != where.zones[0]:
        found.append("--zones gives the zones in order: the launch's zone must be its first.")
    found.extend(_offered_problems(where, [z for z in where.zones if z not in bad]))
    if where.fan_out and len(set(where.zones)) < 2:
        found.append(
            "--fan-out sends the create to every zone of --zones at once: give two or more, "
            "such as --zones us-central1-a,us-west1-c."
        )
    if fails_over(where) and where.route != Route.VM and where.backend != COMPUTE:
        found.append(
            phrase(
                "{0} is for creates that fail fast: on the TPU API a spot or Flex-start request "
                "waits in its zone's queue instead of failing, so there is nothing to fail over "
                "from. Ask in several zones at once instead (fan-out: the first granted is kept, "
                "the others are deleted), or in one zone.",
                Choice("failover", "name"),
            )
        )
    if probes(where) and queue_wait_minutes:
        found.append(
            "Failing over on Flex-start probes each zone with a zero queue wait (Google's "
            "shortest, 90 s), so a --queue-wait has no place: leave it out, or add --fan-out "
            "to let every zone's request wait at once."
        )
    return found


def _offered_problems(where: Where, zones: list[str]) -> list[Said]:
    """Each zone of ``--zones`` must offer the type (and Flex-start, on that route)."""
    offered = where.slice.offered_zones
    found: list[Said] = []
    missing = [z for z in zones if z not in offered]
    if missing:
        found.append(
            f"{where.slice.name} is not offered in {', '.join(missing)} (the catalog's zones for "
            f"it: {', '.join(offered)}): leave {'it' if len(missing) == 1 else 'them'} out of "
            "--zones."
        )
    if where.route == Route.FLEX and not google_errors.launchable(where.slice, where.backend):
        flex = google_errors.flex_zones(where.slice, where.backend)
        no_flex = [z for z in zones if z in offered and z not in flex and z != where.zone]
        if no_flex:  # the first zone's rule is the plan's own (flex_problems)
            found.append(
                f"Flex-start is not offered for {where.slice.name} in {', '.join(no_flex)}: "
                f"Google offers it only in {', '.join(flex) or 'no zone'}."
            )
    return found


def worst_case_hourly(where: Where) -> float | None:
    """A fan-out's price per hour if every request got a node at once, until the losers are
    verified gone (Flex-start: at most on-demand's); None where a zone's price is unknown."""
    from tpuwizard.core.plan import cost

    total = 0.0
    for zone in zones_of(where):
        hourly = cost.at_most_hourly(where.slice, where.route, zone)
        if hourly is None:
            return None
        total += hourly
    return round(total, 2)
