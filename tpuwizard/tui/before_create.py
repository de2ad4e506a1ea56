"""The wizard's Create runs the preflight first, as ``launch`` and ``up`` do, through the same
session code (:func:`tpuwizard.session.preflight.before_create`): a FAIL shows its fix and
creates nothing; an UNKNOWN never stops it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.tui.screens.run import ProvisionScreen


async def checked_plan(app: Any, screen: ProvisionScreen, plan: LaunchPlan) -> LaunchPlan | None:
    """``plan`` as the preflight leaves it (its key imported into the OS Login profile where
    OS Login is on), its lines said on ``screen``; None when a check FAILed: the refusal was
    shown on its own screen and the user went back (nothing was created)."""
    from tpuwizard.session.preflight import before_create
    from tpuwizard.tui.screens.preflight_refused import PreflightRefusedScreen

    screen.checking()
    # The wizard decided the backend on Review: the preflight checks that one, not auto's.
    before = await asyncio.to_thread(before_create, app.session, plan, plan.backend)
    if before.refused:
        refused = PreflightRefusedScreen(before.result.checks)
        await app.switch_screen(refused)
        await refused.gone_back
        app.pop_screen()
        return None
    screen.say([f"Preflight: {c.line()}" for c in before.result.checks])
    checked = before.plan
    if checked.backend == Backend.COMPUTE and checked.route == Route.FLEX:  # the course's Route 2B
        from tpuwizard.words.course_text import route_2b_lines

        deadline = checked.max_run
        screen.say(
            route_2b_lines(checked.node_name, checked.zone, checked.slice, deadline, checked.via)
        )
    return checked
