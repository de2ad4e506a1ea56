"""How long tpuwizard waits on a Flex-start VM that Compute Engine leaves PENDING.

Google's own deadline for the request is its ``params.requestValidForDuration`` (the queue wait,
compute-engine.md, "One VM"): at the end of it the create fails and the VM deletes itself. If no
answer comes (the VM still PENDING), waiting on until --ready-timeout would wait half an hour on a
request Google has already given up; tpuwizard gives up :data:`GRACE_S` after the queue wait, and
the launch deletes the VM and verifies it gone, as after any failed create.
"""

from __future__ import annotations

from collections.abc import Callable

from tpuwizard.core.cloud.compute.body import queue_wait_seconds
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import QueueExpired

GRACE_S = 300.0  # 5 minutes past the queue wait for Google's answer


class PendingLimit:
    """The end of a Flex-start VM's wait: ``check`` raises QueueExpired once the VM has been
    PENDING for its queue wait plus :data:`GRACE_S` (``clock``: a test's own)."""

    def __init__(self, name: str, wait_s: float, clock: Callable[[], float]) -> None:
        self.name, self.wait_s, self.clock = name, wait_s, clock
        self.started = clock()

    @classmethod
    def of(cls, req: NodeRequest, clock: Callable[[], float]) -> PendingLimit:
        """The limit of the Flex-start VM ``req`` makes, from its create on."""
        return cls(req.node_id, queue_wait_seconds(req.queue_wait_s), clock)

    @property
    def limit_s(self) -> float:
        return self.wait_s + GRACE_S

    def check(self, state: str) -> None:
        waited = self.clock() - self.started
        if state != "PENDING" or waited < self.limit_s:
            return
        bound = (
            f"its requestValidForDuration of {self.wait_s / 60:g} min; Google had not answered "
            f"{GRACE_S / 60:g} min after it, so tpuwizard gave up"
        )
        why = RuntimeError(f"the instance {self.name} was still PENDING after {waited:.0f} s")
        raise QueueExpired(self.name, state, waited, why, "flex", bound)
