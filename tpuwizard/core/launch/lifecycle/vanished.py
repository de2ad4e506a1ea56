"""When a command on a node fails, ask the API whether the node itself went away: then that is
the news (deleted by its watchdog, by hand, preempted, a Flex-start run over), not the broken
connection, nor a folder missing on this computer (the sandbox's VMs are folders here)."""

from __future__ import annotations

from typing import Any

from tpuwizard.core.errors import NodeGone, QueueSuspended


def went_away(
    cloud: Any, zone: str, node_id: str, queued_id: str | None, doing: str, err: BaseException
) -> NodeGone | QueueSuspended | None:
    """What happened to ``node_id`` if it is why ``err`` happened; None while it is READY (or
    when the API cannot say: then the command's own error stands)."""
    try:
        node = cloud.get_node(zone, node_id)
        if node is not None and node.up:
            return None
        qr = cloud.get_queued(zone, queued_id) if queued_id else None
    except Exception:
        return None
    if node is None and qr is not None and qr.state == "SUSPENDED":
        route = "flex" if qr.flex else "spot" if qr.spot else None
        return QueueSuspended(qr.name, qr.initiator, route)
    return NodeGone(node_id, None if node is None else node.state, doing, str(err))
