"""What the parts of one launch share: the state they change as it goes, in one place.

The provisioner writes what exists (resource, zone, node, when it was made and first READY),
the launch writes the transport and the watchdog's deadline, the worker steps the jobs they
start; the ending reads all of it to keep or delete, and to price the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tpuwizard.core.cloud.diagnose import Context
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.transports import Transport


@dataclass
class LaunchState:
    zone: str  # where the resource is (a failover may move it)
    resource: Resource | None = None  # what exists and must be kept or deleted
    node: NodeInfo | None = None  # once READY
    created_at: float | None = None  # when the create call was made
    costing_since: float | None = None  # the first READY
    gone_at: float | None = None  # verified gone
    watchdog_deadline: float | None = None  # once the on-VM watchdog is armed
    receipt: str | None = None  # the verifier's receipt here, once saved
    # The node went away under a step (Google preempted it, someone deleted it): its watchdog
    # went with its VM, so there is nothing to keep, only a request or a husk to delete.
    went_away: Exception | None = None
    transport: Transport | None = None
    # Jobs started on the workers, so that a stop can end them (the watchdog is not one).
    running_jobs: list[tuple[int, Job]] = field(default_factory=list)
    # --fan-out: every other request's own state (its resource None once verified gone), and
    # a wait until each has been deleted or could not be; the ending waits before it says
    # what still exists.
    others: list[LaunchState] = field(default_factory=list)
    settle_others: Callable[[], None] | None = None

    def context(self, plan: LaunchPlan) -> Context:
        """What a diagnosis needs to name the project, zone, accelerator and node."""
        return Context(
            project=plan.project,
            zone=self.zone,
            accelerator=plan.accelerator,
            name=plan.node_name,
            route=plan.route,
            backend=plan.backend,
            slice=plan.known_slice,
        )
