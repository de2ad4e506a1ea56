"""CheckedPlan: what a person asked (:class:`LaunchAnswers`) and what the checks before create
found, the only thing a launch starts from (``Session.start_launch``).

The session's pipeline (session/prepare/) makes one once every stage let the answers through:
the plan on the backend decided (with why), the defaults filled, the watchdog decided by the
check before create; and what the preflight found, which only the launch reads (whether it
imports an OS Login key, whether --fan-out's quota was read for every request).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan


@dataclass(frozen=True)
class CheckedPlan:
    """A launch every check before create let through."""

    answers: LaunchAnswers  # as asked (``backend`` may be auto)
    plan: LaunchPlan  # on ``backend.backend``, its defaults filled, its watchdog decided
    backend: BackendChoice  # the backend decided, and why
    ready_timeout_s: float  # the wait for READY
    watchdog_check: WatchdogCheck | None = None  # the check's answer, where it was asked
    # OS Login is on (the preflight read it) and tpuwizard's own SSH is used: the launch imports
    # its key into the caller's OS Login profile and logs in as the POSIX user that answers.
    os_login_key: bool = False
    fan_out_quota_checked: bool = False  # the preflight read quota for every request at once
