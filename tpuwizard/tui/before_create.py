"""The wizard's Create runs the session's pipeline before create, as ``launch``, ``up`` and plain
mode do (:meth:`Session.prepare`, with what the look ahead before Review found): a preflight
FAIL shows its fix and creates nothing; an UNKNOWN never stops it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.session.prepare.outcomes import Outlook
    from tpuwizard.tui.host import WizardHost
    from tpuwizard.tui.screens.run import ProvisionScreen


async def checked_plan(
    app: WizardHost, screen: ProvisionScreen, answers: LaunchAnswers, found: Outlook | None
) -> CheckedPlan | None:
    """The plan the pipeline let through (its key imported into the OS Login profile where OS
    Login is on), the preflight's lines said on ``screen``; None when it refused: a FAIL is
    shown on its own screen and the user goes back, any other refusal is said as Review shows
    again (nothing was created)."""
    from tpuwizard.session.prepare.outcomes import Ready, Refusal, Stage
    from tpuwizard.tui.screens.preflight_refused import PreflightRefusedScreen
    from tpuwizard.words.choice_words import all_words

    screen.checking()
    prepared = await asyncio.to_thread(app.session.prepare, answers, found=found)
    outcome, result = prepared.outcome, prepared.preflight
    if isinstance(outcome, Refusal) and outcome.stage is Stage.PREFLIGHT and result is not None:
        refused = PreflightRefusedScreen(result.checks)
        await app.switch_screen(refused)
        await refused.gone_back
        app.pop_screen()
        return None
    if not isinstance(outcome, Ready):
        app.notify(" ".join(all_words(prepared.reasons, "wizard")), severity="error", timeout=30)
        app.pop_screen()
        return None
    if result is not None:
        screen.say([f"Preflight: {c.line()}" for c in result.checks])
    checked = outcome.checked.plan
    if checked.course_route_2b:
        from tpuwizard.words.course_text import route_2b_lines

        deadline = checked.max_run
        screen.say(
            route_2b_lines(
                checked.node_name, checked.zone, checked.slice, deadline, checked.where.via
            )
        )
    return outcome.checked
