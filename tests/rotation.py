"""Kill drills with many points run a few of them per suite run, the turn moving each day, so
every point is met over a few runs and the suite keeps to its time (CI: 20 minutes on 2 cores).

Every point is proven at the smallest level first, each drill against the in-memory cloud at
every call (tests/unit/test_fan_out.py, test_resume_budget.py, ...); these end-to-end cases show
the same with real processes. ``TPUWIZARD_DRILL=all`` runs every point (before a release, or
when a change touches what a drill covers); ``TPUWIZARD_DRILL_TURN=N`` picks a turn.
"""

from __future__ import annotations

import datetime
import os

ALL_ENV, TURN_ENV = "TPUWIZARD_DRILL", "TPUWIZARD_DRILL_TURN"


def todays_turn() -> str:
    """Set once by the controlling pytest (conftest's pytest_configure): its workers inherit it,
    so all of them collect the same cases even across midnight."""
    return str(datetime.date.today().toordinal())


def rotating(points: list[str], per_run: int, always: tuple[str, ...] = ()) -> list[str]:
    """``always`` and ``per_run`` more of ``points`` for this turn, in their order."""
    rest = [p for p in points if p not in always]
    if os.environ.get(ALL_ENV) == "all" or per_run >= len(rest):
        return list(points)
    turn = int(os.environ.get(TURN_ENV) or todays_turn())
    start = turn * per_run % len(rest)
    chosen = {rest[(start + i) % len(rest)] for i in range(per_run)}
    return [p for p in points if p in chosen or p in always]


def rotating_tests(nodeids: list[str], per_run: int) -> set[str]:
    """Of whole end-to-end tests marked ``@pytest.mark.rotating(GROUP)``: this turn's share.

    The same turn for every xdist worker (each collects alike), so all of them run the same
    share; ``TPUWIZARD_DRILL=all`` runs them all."""
    return set(rotating(sorted(nodeids), per_run))
