"""Waiting on one Compute Engine operation (regional or zonal) through ``wait``: Google answers
once it is DONE or after about two minutes (compute.v1.json), so a fast operation is seen at once
and a slow one costs one call in two minutes. The slices' (compute/slices.py) and Route 2B's."""

from __future__ import annotations

import time
from typing import Any

from tpuwizard.core.cloud.polling import pause
from tpuwizard.core.errors import WaitTimedOut

OPERATION_WAIT_S = 120.0


def wait_operation(
    client: Any,
    project: str,
    scope: dict[str, str],
    name: str,
    timeout: float,
    retry: Any,
    call_timeout: float,
) -> Any:
    """The operation ``name`` once DONE; :class:`WaitTimedOut` when ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        op = client.wait(
            project=project,
            operation=name,
            retry=retry,
            timeout=min(max(left, 1.0), OPERATION_WAIT_S) + call_timeout,
            **scope,
        )
        if status_of(op) == "DONE":
            return op
        if time.monotonic() >= deadline:
            raise WaitTimedOut(f"operation {name}", status_of(op), timeout)
        pause(0.5, None)  # an early answer (Google may return before DONE): not a busy loop


def status_of(op: Any) -> str:
    return str(getattr(op.status, "name", op.status))
