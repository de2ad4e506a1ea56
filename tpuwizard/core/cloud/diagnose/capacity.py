"""Diagnoses about capacity and quota: stockouts in every variant (a refused create, a queued
request that waited its allowed time for nothing), quota, preemption, zones that do not offer a
type. Split from :mod:`tpuwizard.core.cloud.diagnose.failure`, which decides which one applies."""

from __future__ import annotations

import dataclasses

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud import google_errors as ge
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.errors import QueueExpired, QueueSuspended
from tpuwizard.core.routes import Route


def other_zones(ctx: Context) -> list[str]:
    if ctx.slice is None:  # a type the catalog does not know: no zones of its to offer
        return []
    return [z for z in ctx.slice.offered_zones if z != ctx.zone]


def stockout_diagnosis(ctx: Context, capacity: str, spot: bool) -> Diagnosis:
    """Every capacity variant: other zones, spot, Flex-start where Google offers it, failover."""
    where = f" in {ctx.zone}" if ctx.zone else ""
    zones = other_zones(ctx)
    steps: list[Said] = []
    if zones:
        steps.append(
            phrase(
                f"Try another zone that offers {ctx.accelerator}: {', '.join(zones)} "
                "(offered is not the same as free right now): {0}.",
                Choice("failover"),
            )
        )
    flex = ge.flex_zones(ctx.slice, ctx.backend or "auto")
    if flex and ctx.route != Route.FLEX:
        steps.append(
            phrase(
                f"Use Flex-start in {', '.join(flex)} ({{0}}): the request waits in a queue "
                "for capacity and runs for a bounded time.",
                Choice("route", "flex"),
            )
        )
    if not spot:
        steps.append(
            phrase(
                "Or try spot capacity ({0}), which is often easier to get.", Choice("route", "spot")
            )
        )
    return Diagnosis(
        "stockout",
        f"No TPU capacity{where} right now",
        f"Google has no free {ctx.accelerator or 'TPU'} capacity{where} at the moment: "
        f"{capacity}. Nothing was created and nothing is billing.",
        steps,
        zones,
    )


def queue_expired_diagnosis(err: QueueExpired, ctx: Context) -> Diagnosis:
    """A queued request that got no capacity in the time it was allowed to wait: a stockout
    (other zones, Flex-start, spot), never "it took too long"."""
    route = err.route or ctx.route
    ctx = dataclasses.replace(ctx, route=route)
    waited = f" for {err.waited_s / 60:.0f} min" if err.waited_s else ""
    bound = err.bound or "queueingPolicy.validUntilDuration"
    capacity = (
        f"the {_route_words(route)}request {err.name} waited in Google's queue{waited} "
        f"(last {err.state}) and no capacity came free in the time it was allowed ({bound})"
    )
    return stockout_diagnosis(ctx, capacity, route == Route.SPOT)


def _route_words(route: str | None) -> str:
    return {"spot": "spot ", "flex": "Flex-start "}.get(route or "", "")


def queue_suspended_diagnosis(err: QueueSuspended, ctx: Context) -> Diagnosis:
    """SUSPENDED: "the resources specified in the QueuedResource request have been deleted"
    (discovery document); ``stateInitiator`` says by whom."""
    route = err.route or ctx.route
    if err.initiator == "USER":
        return Diagnosis(
            "suspended",
            "The queued request was suspended by a user",
            f"Someone (the console, gcloud, or another tpuwizard) suspended {err.name} or "
            "deleted its TPU before this launch used it.",
            ["Run tpuwizard status to see what exists, then launch again."],
        )
    if route == Route.FLEX:
        return Diagnosis(
            "flex_ended",
            "The Flex-start run time is over",
            f"Google deleted the VMs of {err.name} at the end of its maximum run duration; the "
            "request stays SUSPENDED until it is deleted (tpuwizard deletes it).",
            ["Launch again with a longer maximum run, up to 7 days."],
        )
    if route == Route.SPOT:
        return preempted_diagnosis("spot")
    return Diagnosis(
        "suspended",
        "Google suspended the queued request",
        f"Google deleted the TPU of {err.name} and suspended the request.",
        ["Run tpuwizard status to see what exists, then launch again."],
    )


def quota_diagnosis(quota: ge.Quota, ctx: Context, project: str, where: str) -> Diagnosis:
    """A quota refusal: which quota, in which region; never retried."""
    name = quota.name or "the TPU quota for this accelerator and zone"
    region = quota.region or (ctx.zone.rsplit("-", 1)[0] if ctx.zone else None)
    in_region = f" in region {region}" if region else where
    limit = f" (limit {quota.limit})" if quota.limit is not None else ""
    steps: list[Said] = [
        f"Request more in the console: IAM & Admin → Quotas, filter on {name}"
        + (f" and region {region}" if region else "")
        + ".",
        "Or choose a zone or accelerator type with free quota, or a spot or "
        "Flex-start route, which use preemptible quota.",
    ]
    if ge.serving_bucket(quota, ctx.slice):
        steps.insert(
            1,
            "Single-host v5e (1, 4 or 8 chips) counts against the serving quota, which is "
            "small by default; a training request is a separate quota.",
        )
    return Diagnosis(
        "quota",
        "Quota exceeded",
        f"The project {project} has no quota left for {name}{in_region}{limit}. Retrying will "
        "not help until the quota is raised.",
        steps,
    )


def preempted_diagnosis(route: str = "spot") -> Diagnosis:
    return Diagnosis(
        "preempted",
        "Google preempted the spot TPU",
        "Spot capacity can be taken back at any moment: the VM stopped and its work with it. "
        "tpuwizard deletes it now, since a preempted node still counts against your quota.",
        [
            phrase(
                "Relaunch: run the same launch again ({0}); save checkpoints so a restart resumes.",
                Choice("route", route),
            ),
            phrase(
                "For a run that must not be interrupted choose {0}.", Choice("route", "vm,flex")
            ),
        ],
    )


def invalid_zone_diagnosis(ctx: Context, message: str) -> Diagnosis:
    zones = (
        other_zones(Context(accelerator=ctx.accelerator, slice=ctx.slice))
        if ctx.accelerator
        else []
    )
    steps: list[Said] = (
        [f"Zones documented to offer {ctx.accelerator}: {', '.join(zones)}."] if zones else []
    )
    steps.append(
        phrase("Choose a zone your project can use: {0}.", Choice("zone", ctx.accelerator or ""))
    )
    return Diagnosis(
        "invalid_zone", "That zone does not offer this TPU", f"{message}", steps, zones
    )
