"""When and how the node ends, as rules a plan must satisfy before any cloud call: the Deadline
part's rules (parts.py).

The idle deadline of a kept node (``tpuwizard up --idle``) is the on-VM watchdog's: it deletes
the node after so many minutes without a heartbeat. Where Google's deadline is the only one
(Flex-start's run duration, Compute Engine's max run duration: plan/backend_rules.py) there is
no watchdog, so no idle deadline either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.deadlines import deadline_problem
from tpuwizard.core.launch.plan.deadline_keeper import FLEX_START, DeadlineKeeper

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.core.launch.plan.parts import Deadline
    from tpuwizard.core.routes import Route


def idle_problems(deadline: Deadline, route: Route, backend: Backend) -> list[Said]:
    """Why ``deadline``'s idle deadline cannot be kept on ``route`` and ``backend``; empty when
    it can (or there is none)."""
    if deadline.idle_minutes is None:
        return []
    googles = DeadlineKeeper(route, backend).googles
    if googles:
        return [
            phrase(
                f"{{0}} needs the on-VM watchdog, which {googles} does not have: Google deletes "
                "the node at its deadline. Give {1} for that deadline, and {2}.",
                Choice("idle"),
                Choice("max_run"),
                Choice("idle", "off"),
            )
        ]
    if not deadline.watchdog:
        return [
            phrase(
                "{0} needs the on-VM watchdog, which this plan goes without: keep the watchdog "
                "on, or {1}.",
                Choice("idle"),
                Choice("idle", "off"),
            )
        ]
    return []


def deadline_problems(deadline: Deadline, route: Route, backend: Backend) -> list[Said]:
    """The idle deadline's rules, then the deadline's and the idle time's bounds."""
    found = idle_problems(deadline, route, backend)
    bounds = ((deadline.max_run_minutes, "deadline"), (deadline.idle_minutes, "idle time"))
    for minutes, what in bounds:
        problem = deadline_problem(minutes, what)
        if problem:
            found.append(problem)
    return found


def watchdog_problems(deadline: Deadline, keeper: DeadlineKeeper) -> list[Said]:
    """A watchdog asked where Flex-start keeps the deadline (``keeper``: the plan's)."""
    if deadline.watchdog and keeper.googles == FLEX_START:
        return [
            "Flex-start already ends at its deadline (its maxRunDuration): "
            "the watchdog is for the vm and spot routes."
        ]
    return []
