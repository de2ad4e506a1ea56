"""Advice never names an option the same plan refuses: one rule for every diagnosis.

A diagnosis's next steps may name choices (a :class:`~tpuwizard.core.choices.Phrase`: another
transport, external addresses, the other backend, a route...). Each such choice is applied to
the plan that failed and the plan's own rules (``LaunchPlan.problems``) are asked; a step naming
a choice the plan would then refuse is left out, so no front end ever suggests a flag that the
next launch would answer with exit 2.
"""

from __future__ import annotations

import dataclasses

from tpuwizard.core.choices import Choice, Phrase, Said
from tpuwizard.core.cloud.backends import Backend, Transport
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.on_backend import on_backend
from tpuwizard.core.routes import Route


def with_choice(plan: LaunchPlan, choice: Choice) -> list[LaunchPlan]:
    """The plans ``choice`` would make of ``plan`` (several where it names alternatives, as
    ``route`` "spot,vm"); empty for a choice that is no field of a plan (a zone to look up, a
    name to type, practice mode): those are not the plan's rules to judge."""
    c, v = choice.control, choice.value
    replace = dataclasses.replace
    reach = plan.reach
    if c == "transport":
        return [replace(plan, reach=replace(reach, transport=Transport(v or Transport.GCLOUD)))]
    if c == "external_ips":
        if v == "on":
            return [replace(plan, reach=replace(reach, internal_ips=False))]
        gcloud = replace(reach, internal_ips=True, transport=Transport.GCLOUD)
        return [replace(plan, reach=gcloud)]
    if c == "backend":  # as the session's pipeline moves a plan there: one rule
        return [on_backend(plan, Backend(v or Backend.TPU_API))]
    if c == "route" and v:
        where = plan.where
        waitless = replace(plan.deadline, queue_wait_minutes=None)
        return [
            replace(plan, where=replace(where, route=Route(r)), deadline=waitless)
            for r in v.split(",")
        ]
    if c == "watchdog" and v == "off":
        return [replace(plan, deadline=replace(plan.deadline, watchdog=False))]
    return []


def refused(plan: LaunchPlan, choice: Choice) -> bool:
    """Would ``plan`` with ``choice`` be refused (every alternative it names)?"""
    plans = with_choice(plan, choice)
    return bool(plans) and all(p.problems() for p in plans)


def possible(d: Diagnosis, plan: LaunchPlan) -> Diagnosis:
    """``d`` without the next steps that name a choice ``plan`` would refuse."""

    def allowed(step: Said) -> bool:
        return not isinstance(step, Phrase) or not any(refused(plan, c) for c in step.choices)

    kept = [s for s in d.next_steps if allowed(s)]
    return d if len(kept) == len(d.next_steps) else dataclasses.replace(d, next_steps=kept)
