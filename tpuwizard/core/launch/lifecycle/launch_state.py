"""What the parts of one launch share: the state they change as it goes, in one place, and the
:class:`LaunchContext` each part is handed with it (where its events go, the stop).

The provisioner writes what exists (resource, zone, node, when it was made and first READY),
the launch writes the transport and the watchdog's deadline, the worker steps the jobs they
start; the ending reads all of it to keep or delete, and to price the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.launch.events import launch_events as ev
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
    # Set up and every check of the verifier passed: a node fit to hand over (a kept one
    # that failed either is deleted; a failure of the user's script after it is theirs).
    proven: bool = False
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

    def context(self, about: Context) -> Context:
        """What a diagnosis needs: the launch's names (``about``: its project, accelerator,
        node, route, backend) in the zone the resource is in now."""
        return replace(about, zone=self.zone)


@dataclass(frozen=True)
class LaunchContext:
    """What every part of a launch truly shares, and nothing else: where its events go, the
    stop (a signal, Delete now, Keep), and the state the parts change as the launch goes."""

    emit: Callable[[ev.Event], None]
    cancel: CancelToken
    state: LaunchState
