"""The watchdog's switch, decided before create for every front end.

On by default where the check before create (:meth:`Session.watchdog_check`) does not say no;
where it says no, off, with the reason and the command that would allow it, and the launch goes on
without it (a beginner's first create never becomes a 403). An explicit "on" (``--watchdog``)
insists: a "no" is then an error before anything is created.

The check's answer is a finding, not the plan's: ``attach_problems`` (the rule every front end
shows, through the session's pipeline) refuses a plan that would attach an account the caller
may not attach.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.errors import BadInput, PlanRefused
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, attach_problems
from tpuwizard.core.launch.plan.route_offers import WATCHDOG_ROUTES
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.cloud.iam import WatchdogCheck


class AsksWatchdog(Protocol):
    """The session's check before create (:meth:`Session.watchdog_check`)."""

    def watchdog_check(self, service_account: str | None = None) -> WatchdogCheck: ...


@dataclass(frozen=True)
class WatchdogChoice:
    plan: LaunchPlan  # with ``watchdog`` set as decided
    check: WatchdogCheck | None  # None: not asked (flex, or the user said off)
    why_not: str | None  # when off: why, in words that follow "because"

    def lines(self, now: float | None = None) -> list[str]:
        """What to tell the user: the check's answer (when not a plain yes) and the deadline."""
        out = []
        if self.check is not None and self.check.can_arm is False:
            fix = f" To allow it: {self.check.fix}" if self.check.fix else ""
            out.append(f"Watchdog off: {self.check.reason}.{fix}")
        elif self.check is not None and self.check.can_arm is None and self.plan.watchdog:
            out.append(f"Watchdog on: {self.check.reason}.")
        out.append(self.deadline_line(now))
        return out

    def deadline_line(self, now: float | None = None) -> str:
        """What the deadline really does, with why there is no watchdog where there is none."""
        return self.plan.deadline_words(time.time() if now is None else now, self.why_not)


def check_words(check: WatchdogCheck) -> str:
    """One line for a switch's neighbourhood: the check's answer in words."""
    if check.can_arm:
        return f"The watchdog can run: {check.reason}."
    if check.can_arm is None:
        return f"Not known whether the watchdog can run: {check.reason}."
    return f"The watchdog cannot run: {check.reason}." + (
        f" To allow it: {check.fix}" if check.fix else ""
    )


def default_watchdog(
    route: Route, check: WatchdogCheck | None, backend: Backend = Backend.TPU_API
) -> bool:
    """The switch before anyone touches it, the same in every front end: on where the route has
    a watchdog and the check before create did not say no. A check that could not be made says
    "not known", and then it is on too: the VM checks again after create and says if it cannot
    run, while off would leave a node that nothing deletes if this computer sleeps."""
    if DeadlineKeeper(route, backend).googles is not None:
        return False  # Google deletes it at its deadline itself: Flex-start, Compute Engine
    return route in WATCHDOG_ROUTES and (check is None or check.arm_by_default)


def _with_watchdog(plan: LaunchPlan, on: bool) -> LaunchPlan:
    """``plan`` with its watchdog decided ``on`` or off."""
    return dataclasses.replace(plan, deadline=dataclasses.replace(plan.deadline, watchdog=on))


def choose_watchdog(
    session: AsksWatchdog,
    plan: LaunchPlan,
    asked: bool | None,
    kept_for_runs: bool = False,
    known: WatchdogCheck | None = None,
) -> WatchdogChoice:
    """``asked``: None (decide by the check), True (on; a "no" raises BadInput), False (off).
    ``kept_for_runs`` (``up``): None means on whatever the check says (keeping a node that the
    check says nothing would delete is the keep stage's question). ``known``: the check's answer
    already asked (a walk's), which says why the watchdog is off where the user left it off."""
    if plan.deadline_keeper.by_max_run_duration:  # Google's deadline: nothing to arm
        decided = _with_watchdog(plan, bool(asked))
        decided.validate()  # --watchdog here is refused, saying why
        return WatchdogChoice(decided, None, None)
    if plan.route not in WATCHDOG_ROUTES:
        return WatchdogChoice(_with_watchdog(plan, False), None, None)
    if asked is False:
        said_no = known is not None and known.can_arm is False
        why = known.reason if known is not None and said_no else "the watchdog was switched off"
        return WatchdogChoice(_with_watchdog(plan, False), None, why)
    check = session.watchdog_check(plan.reach.service_account)
    on = bool(asked) or kept_for_runs or default_watchdog(plan.route, check)
    decided = _with_watchdog(plan, on)
    # An account the caller may not attach: refused now, with every way on.
    if problems := decided.problems() + attach_problems(decided, check):
        raise PlanRefused(problems)
    if asked and check.can_arm is False:  # --watchdog insists, and the account may not delete
        raise BadInput(f"The watchdog cannot run: {check.reason}. To allow it: {check.fix}")
    return WatchdogChoice(decided, check, None if on else check.reason)
