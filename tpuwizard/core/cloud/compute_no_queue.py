"""The Cloud protocol's queued kind on Compute Engine, which has none: spot and Flex-start are
the instance's own scheduling (compute.py), so nothing of the kind can exist or be waited on."""

from __future__ import annotations

from collections.abc import Callable

from tpuwizard.core.cloud.types import NodeRequest, QueuedInfo


class NoQueuedKind:
    """The queued members of the ``Cloud`` protocol where nothing is queued."""

    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        raise NotImplementedError("Compute Engine queues nothing: create_node takes every route")

    def wait_for_queued(
        self,
        zone: str,
        qr_id: str,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 3600,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> QueuedInfo:
        raise NotImplementedError("Compute Engine queues nothing: wait_for_node waits")

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        return None

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        return []

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        return None  # nothing of the kind can exist here

    def queued_gone(self, zone: str, qr_id: str) -> bool:
        return True
