"""The launch's parts: each a frozen, typed value declared once, which ``LaunchAnswers`` holds as
asked and ``LaunchPlan`` as decided, and whose rules live in a rule file of its own.

A new option of a part touches the part, its rule, its option group and its question, not every
place a launch's values pass through (issue 53). Parts import nothing of the plan, so every room
that reads one (the workers, the kept nodes, the front ends) can hold it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Guards:
    """The guards on a run's workers, as asked: the stall guard's minutes (a worker that printed
    nothing and used no CPU for that long ends the run; 0: no guard), and the timeouts the
    launcher gives ``jax.distributed.initialize()`` where the script passes none. None leaves
    each to its default (core/deadlines.py); guard_rules.py says which values are refused."""

    stall_minutes: float | None = None
    join_timeout_s: int | None = None
    heartbeat_timeout_s: int | None = None
