"""The idle deadline of a kept node (``tpuwizard up --idle``), as rules a plan must satisfy
before any cloud call (IdleFields.problems).

The idle deadline is the on-VM watchdog's: it deletes the node after so many minutes without a
heartbeat. Where Google's deadline is the only one (Flex-start's run duration, Compute Engine's
max run duration: plan/backend_rules.py) there is no watchdog, so no idle deadline either.
"""

from __future__ import annotations

from typing import Protocol

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper


class IdleFields(Protocol):
    """What these rules read of a plan (a :class:`LaunchPlan` has it all)."""

    @property
    def backend(self) -> str: ...

    @property
    def idle_minutes(self) -> float | None: ...

    @property
    def route(self) -> str: ...

    @property
    def watchdog(self) -> bool: ...


def idle_problems(plan: IdleFields) -> list[Said]:
    """Why ``plan``'s idle deadline cannot be kept; empty when it can (or there is none)."""
    if plan.idle_minutes is None:
        return []
    googles = DeadlineKeeper(plan.route, plan.backend).googles
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
    if not plan.watchdog:
        return [
            phrase(
                "{0} needs the on-VM watchdog, which this plan goes without: keep the watchdog "
                "on, or {1}.",
                Choice("idle"),
                Choice("idle", "off"),
            )
        ]
    return []
