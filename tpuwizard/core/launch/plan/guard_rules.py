"""The rules of the Guards part (parts.py): which stall and join timeouts a run may ask for."""

from __future__ import annotations

import math

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.launch.plan.parts import Guards


def guard_problems(guards: Guards) -> list[Said]:
    """The stall guard's and the join's timeouts: numbers of zero or more (0: no stall guard),
    the join's at least one second."""
    found: list[Said] = []
    stall = guards.stall_minutes
    if stall is not None and not (math.isfinite(stall) and stall >= 0):
        found.append(
            phrase(
                "The stall guard's timeout must be a number of minutes, 0 or more (0 turns it "
                f"off), not {stall:g}: give it in {{0}}.",
                Choice("stall_timeout"),
            )
        )
    timeouts = (
        ("--join-timeout", guards.join_timeout_s),
        ("--heartbeat-timeout", guards.heartbeat_timeout_s),
    )
    for flag, value in timeouts:
        if value is not None and value < 1:
            found.append(f"{flag} must be a whole number of seconds, 1 or more, not {value}.")
    return found
