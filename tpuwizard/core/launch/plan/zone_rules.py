"""The rules for a plan over several zones (``--zones``, ``--failover``, ``--fan-out``), before
any cloud call (ZoneFields.problems), and what each attempt sends.

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

from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud import gcloud_config, google_errors
from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Deadline


class ZoneFields(Protocol):
    """What these rules read of a plan (a :class:`LaunchPlan` has it all)."""

    @property
    def accelerator(self) -> str: ...

    @property
    def known_slice(self) -> catalog.Slice | None: ...

    @property
    def backend(self) -> str: ...

    @property
    def failover(self) -> bool: ...

    @property
    def fan_out(self) -> bool: ...

    @property
    def route(self) -> str: ...

    @property
    def zone(self) -> str: ...

    @property
    def zones(self) -> tuple[str, ...]: ...


def zones_of(plan: ZoneFields) -> tuple[str, ...]:
    """The zones a launch may create in, in order: ``--zones``, else its one zone."""
    return plan.zones or (plan.zone,)


def zones_from(zones: tuple[str, ...], zone: str) -> tuple[str, ...]:
    """``zones`` in their order, starting at ``zone`` and going round: after a preemption in
    the second zone of A,B,C a new node is made in B, then C, then A (the zones before it had no
    capacity when it was made). A zone not listed comes first, the list after it."""
    if zone not in zones:
        return (zone, *zones)
    at = zones.index(zone)
    return zones[at:] + zones[:at]


def fails_over(plan: ZoneFields) -> bool:
    """Serial failover: after a stockout, the next zone (``--zones``' next, or any offering)."""
    return (plan.failover or len(plan.zones) > 1) and not plan.fan_out


def probes(plan: ZoneFields) -> bool:
    """Does each attempt send the probe's zero queue wait (Compute Engine Flex-start, serial)?"""
    return fails_over(plan) and plan.backend == COMPUTE and plan.route == Route.FLEX


def zones_problems(plan: ZoneFields, deadline: Deadline) -> list[Said]:
    """Why ``plan``'s zones cannot be used as asked (``deadline``: its queue wait); empty when
    they can."""
    found: list[Said] = []
    for zone in sorted({z for z in plan.zones if plan.zones.count(z) > 1}):
        found.append(f"{zone} is listed more than once in --zones: list each zone once.")
    bad = []
    for zone in plan.zones:
        try:
            gcloud_config.validate_zone(zone)
        except BadInput as err:
            bad.append(zone)
            found.append(str(err))
    if plan.zones and plan.zone != plan.zones[0]:
        found.append("--zones gives the zones in order: the launch's zone must be its first.")
    found.extend(_offered_problems(plan, [z for z in plan.zones if z not in bad]))
    if plan.fan_out and len(set(plan.zones)) < 2:
        found.append(
            "--fan-out sends the create to every zone of --zones at once: give two or more, "
            "such as --zones us-central1-a,us-west1-c."
        )
    if fails_over(plan) and plan.route != Route.VM and plan.backend != COMPUTE:
        found.append(
            phrase(
                "{0} is for creates that fail fast: on the TPU API a spot or Flex-start request "
                "waits in its zone's queue instead of failing, so there is nothing to fail over "
                "from. Ask in several zones at once instead (fan-out: the first granted is kept, "
                "the others are deleted), or in one zone.",
                Choice("failover", "name"),
            )
        )
    if probes(plan) and deadline.queue_wait_minutes:
        found.append(
            "Failing over on Flex-start probes each zone with a zero queue wait (Google's "
            "shortest, 90 s), so a --queue-wait has no place: leave it out, or add --fan-out "
            "to let every zone's request wait at once."
        )
    return found


def _offered_problems(plan: ZoneFields, zones: list[str]) -> list[Said]:
    """Each zone of ``--zones`` must offer the type (and Flex-start, on that route)."""
    if plan.known_slice is None:
        return []  # said once, by the accelerator rule
    offered = plan.known_slice.offered_zones
    found: list[Said] = []
    missing = [z for z in zones if z not in offered]
    if missing:
        found.append(
            f"{plan.accelerator} is not offered in {', '.join(missing)} (the catalog's zones for "
            f"it: {', '.join(offered)}): leave {'it' if len(missing) == 1 else 'them'} out of "
            "--zones."
        )
    if plan.route == Route.FLEX and not google_errors.launchable(plan.known_slice, plan.backend):
        flex = google_errors.flex_zones(plan.known_slice, plan.backend)
        no_flex = [z for z in zones if z in offered and z not in flex and z != plan.zone]
        if no_flex:  # the first zone's rule is ZoneFields's own (flex_problems)
            found.append(
                f"Flex-start is not offered for {plan.accelerator} in {', '.join(no_flex)}: "
                f"Google offers it only in {', '.join(flex) or 'no zone'}."
            )
    return found


def worst_case_hourly(plan: ZoneFields) -> float | None:
    """A fan-out's price per hour if every request got a node at once, until the losers are
    verified gone (Flex-start: at most on-demand's); None where a zone's price is unknown."""
    from tpuwizard.core.plan import cost

    slice_ = plan.known_slice
    if slice_ is None:
        return None  # an unknown type: said once, by the accelerator rule
    total = 0.0
    for zone in zones_of(plan):
        hourly = cost.at_most_hourly(slice_, plan.route, zone)
        if hourly is None:
            return None
        total += hourly
    return round(total, 2)
