"""Can this computer reach a node's workers at all? Asked once, quickly, before any SSH wait.

Google gives a worker an external address only when the create asked for one
(reference/google-behaviour.md, Creating); a worker with only an internal address is reachable
from inside its VPC (or over a VPN) and from nowhere else. Rather than retry SSH for minutes
against an address that cannot answer, the workers without an external address get one short
TCP probe; an external address is trusted to answer once the VM has booted.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.errors import Unreachable

PROBE_TIMEOUT_S = 5.0


def refused(host: str, port: int, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Why a TCP connection to ``host:port`` fails, or None when it opens."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as err:
        return err.strerror or type(err).__name__


def check_reachable(
    node: NodeInfo,
    port: int | None,
    timeout: float = PROBE_TIMEOUT_S,
    workers: Sequence[int] | None = None,
) -> list[str]:
    """Each worker's address (external if it has one, else internal; worker i at index i).

    Raises :class:`Unreachable` when a worker without an external address does not answer on
    ``port``; with ``port`` None (no network path to probe) such a worker is unreachable as such.
    """
    internal = [w for w in node.internal_only if workers is None or w in workers]
    bad: list[int] = []
    why = "it has no external address"
    for worker in internal:
        if port is None:
            bad.append(worker)
            continue
        reason = refused(node.endpoints[worker], port, timeout)
        if reason is not None:
            bad.append(worker)
            why = f"it has no external address and its internal one refused: {reason}"
    if bad:
        raise Unreachable(node.name, bad, why)
    return list(node.addresses)
