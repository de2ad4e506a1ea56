"""Who ends a node at its deadline, Google or the watchdog, and how: decided here once, from the
route, the backend and the watchdog switch, for the plan's rules and words, the launch's Kept
record and every front end.

Google keeps the deadline of Flex-start (its run duration, on either backend) and of Compute
Engine (each VM's max run duration, DELETE at the end: compute-engine.md): there is no on-VM
watchdog there, so no idle deadline either (plan/deadline_rules.py). Elsewhere (the vm and spot
routes on the TPU API) the on-VM watchdog deletes the node at its deadline, when it is on.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.cloud.backends import COMPUTE, Backend
from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.routes import Route

# Whose deadline Google keeps, in the words the messages use.
FLEX_START, COMPUTE_ENGINE = "Flex-start", "Compute Engine"


@dataclass(frozen=True)
class DeadlineKeeper:
    """Who ends a node at its deadline, and how, for ``route`` on ``backend``."""

    route: Route
    backend: Backend
    watchdog: bool = False

    @property
    def googles(self) -> str | None:
        """Whose deadline Google keeps: "Flex-start" (its run duration, on either backend) or
        "Compute Engine" (its max run duration); None where the watchdog is tpuwizard's way."""
        if self.route == Route.FLEX:
            return FLEX_START
        if self.backend == COMPUTE:
            return COMPUTE_ENGINE
        return None

    @property
    def by_max_run_duration(self) -> bool:
        """Compute Engine deletes each VM at its max run duration (Flex-start VMs too): no
        watchdog to arm, whatever the route."""
        return self.backend == COMPUTE

    @property
    def ended_by(self) -> EndedBy:
        """Who the plan means to end it: Google, the watchdog (once it is armed), or nothing."""
        if self.googles is not None:
            return EndedBy.GOOGLE
        return EndedBy.WATCHDOG if self.watchdog else EndedBy.NOTHING
