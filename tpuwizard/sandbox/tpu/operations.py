"""The sandbox's long-running operations: every create and delete answers with one, done later.

An operation is stored with when it is done (``_done_at``) and what then happens (``_on_done``, a
``kind`` and its details); :meth:`~tpuwizard.sandbox.state.SandboxState.tick` has the part that
owns that kind finish it.
"""

from __future__ import annotations

from typing import Any

from tpuwizard.sandbox.model import OP_TYPE, ApiError, now_iso, public
from tpuwizard.sandbox.store import StateStore


class Operations:
    """Start, read and mark done the operations kept in ``store.data["operations"]``."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def start(
        self,
        project: str,
        zone: str,
        verb: str,
        target: str,
        version: str,
        done_at: float,
        on_done: dict[str, Any],
    ) -> dict[str, Any]:
        """A new operation, not done yet, numbered from the counter node ids share."""
        data = self.store.data
        data["counter"] += 1
        name = f"projects/{project}/locations/{zone}/operations/operation-{data['counter']}"
        op = {
            "name": name,
            "metadata": {
                "@type": OP_TYPE.format(version=version),
                "createTime": now_iso(),
                "target": target,
                "verb": verb,
                "apiVersion": version,
            },
            "done": False,
            "_done_at": done_at,
            "_on_done": on_done,
        }
        data["operations"][name] = op
        return op

    def get_operation(self, name: str) -> dict[str, Any]:
        op = self.store.data["operations"].get(name)
        if op is None:
            raise ApiError(404, "NOT_FOUND", f"Operation {name} was not found.")
        return public(op)

    def due(self, t: float) -> list[dict[str, Any]]:
        """The operations not done whose time has come by ``t``."""
        ops = self.store.data["operations"].values()
        return [op for op in ops if not op["done"] and op["_done_at"] <= t]

    @staticmethod
    def mark_done(op: dict[str, Any]) -> None:
        op["done"] = True
        op["metadata"]["endTime"] = now_iso()
