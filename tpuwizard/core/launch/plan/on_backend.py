"""A plan moved to another backend: written once, for every move.

Two things move a plan: ``auto`` decided by Compute Engine's quota (the session's pipeline
before create), and advice that names the other backend (plan/advice.py asks the plan's rules
whether such a step could run). Both go through :func:`on_backend`, so neither can leave the
watchdog on where Google keeps the deadline (a second copy of this once did).
"""

from __future__ import annotations

import dataclasses

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan


def on_backend(plan: LaunchPlan, backend: Backend) -> LaunchPlan:
    """``plan`` on ``backend``. Where Google's max run duration is the deadline (Compute Engine)
    there is no watchdog to arm, so no idle time either (launch and up refuse those flags
    there). Its rules are not asked here: the caller asks ``problems()``."""
    if backend == plan.backend:
        return plan
    moved = dataclasses.replace(plan, where=dataclasses.replace(plan.where, backend=backend))
    if moved.deadline_keeper.by_max_run_duration:
        ended = dataclasses.replace(moved.deadline, watchdog=False, idle_minutes=None)
        moved = dataclasses.replace(moved, deadline=ended)
    return moved
