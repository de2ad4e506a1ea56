"""What a route offers a launch besides its node: an on-VM watchdog (vm and spot; Flex-start's
deadline is Google's), and a run that resumes after a preemption (spot, which Google preempts).

The session's pipeline before create reads these (session/prepare/), and the front ends learn
them from it: no front end imports this module (an import-linter contract says so).
"""

from __future__ import annotations

from tpuwizard.core.routes import Route

WATCHDOG_ROUTES: tuple[Route, ...] = (Route.VM, Route.SPOT)
RESUME_ROUTES: tuple[Route, ...] = (Route.SPOT,)  # the routes Google preempts
