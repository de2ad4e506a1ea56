"""An in-memory stand-in for TpuCloud, for unit tests of ownership, teardown and the ledger.

It keeps nodes and queued resources by (zone, name) with their labels, answers a create for a
taken name with 409 as Google does, and can be told to fail reads, to lose a create's answer
after applying it, and to "crash": from a given call on, every call raises :class:`Crash` (a
BaseException, so no ``except Exception`` in the code under test swallows it, as with SIGKILL
nothing after it runs). It logs every delete with the labels the deleted resource had.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from google.api_core import exceptions as gx

from tpuwizard.core.cloud import google_errors, tpu_states
from tpuwizard.core.cloud.protocol import NodeIdentity
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.errors import CreateFailed


class Crash(BaseException):
    """The process died here."""


@dataclass
class Item:
    kind: str  # node or queued
    zone: str
    name: str
    labels: dict[str, str]
    accelerator: str = "v5litepod-4"
    node_id: str = ""  # a queued resource's node
    state: str = "READY"


@dataclass
class FakeCloud:
    project: str = "p"
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    read_failure: float = 0.0  # chance that one read raises (retries exhausted)
    lose_create_answer: float = 0.0  # chance a create is applied but answers 500
    crash_at: int | None = None  # the call number from which every call raises Crash
    items: dict[tuple[str, str, str], Item] = field(default_factory=dict)
    deleted: list[Item] = field(default_factory=list)
    created: list[Item] = field(default_factory=list)
    calls: int = 0

    # -- plumbing -------------------------------------------------------------------------
    def _call(self) -> None:
        self.calls += 1
        if self.crash_at is not None and self.calls >= self.crash_at:
            raise Crash()

    def _read(self) -> None:
        self._call()
        if self.rng.random() < self.read_failure:
            raise gx.InternalServerError("read failed")

    def add(self, item: Item) -> None:
        self.items[(item.kind, item.zone, item.name)] = item

    def node_path(self, zone: str, node_id: str) -> str:
        return f"projects/{self.project}/locations/{zone}/nodes/{node_id}"

    # -- nodes ----------------------------------------------------------------------------
    def _node_info(self, it: Item) -> NodeInfo:
        return NodeInfo(
            it.name, it.zone, it.accelerator, it.state, dict(it.labels), 1.0, ("10.0.0.2",)
        )

    def _create(self, item: Item) -> None:
        self._call()
        if (item.kind, item.zone, item.name) in self.items:
            raise gx.Conflict(f"{item.name} already exists")
        self.add(item)
        self.created.append(item)
        if self.rng.random() < self.lose_create_answer:
            raise gx.InternalServerError("the answer was lost")

    def create_node(self, req: NodeRequest) -> object:
        self._create(Item("node", req.zone, req.node_id, req.labels, req.accelerator_type))
        return None

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        self._read()
        it = self.items.get(("node", zone, node_id))
        return None if it is None else self._node_info(it)

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        self._read()
        want = labels or {}
        return [
            self._node_info(it)
            for it in self.items.values()
            if it.kind == "node"
            and it.zone == zone
            and all(it.labels.get(k) == v for k, v in want.items())
        ]

    def wait_for_node(self, zone: str, node_id: str, *args: object, **kw: object) -> NodeInfo:
        node = self.get_node(zone, node_id)
        if node is None:
            raise CreateFailed(RuntimeError("the node disappeared while it was created"))
        return node

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        self._call()
        it = self.items.pop(("node", zone, node_id), None)
        if it is not None:
            self.deleted.append(it)

    def node_gone(self, zone: str, node_id: str) -> bool:
        return self.get_node(zone, node_id) is None and all(
            n.name != node_id for n in self.list_nodes(zone)
        )

    # -- queued resources -----------------------------------------------------------------
    def _queued_info(self, it: Item) -> QueuedInfo:
        return QueuedInfo(it.name, it.zone, it.state, it.node_id, it.accelerator, dict(it.labels))

    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        self._create(
            Item("queued", req.zone, qr_id, req.labels, req.accelerator_type, req.node_id, "ACTIVE")
        )

    def wait_for_queued(self, zone: str, qr_id: str, *args: object, **kw: object) -> QueuedInfo:
        qr = self.get_queued(zone, qr_id)
        if qr is None:
            raise CreateFailed(RuntimeError("the queued resource is NOT_FOUND"))
        if ("node", zone, qr.node_id) in self.items:  # Google fails a request for a taken name
            raise CreateFailed(RuntimeError("the node name is taken"))
        self.add(Item("node", zone, qr.node_id, dict(qr.labels), qr.accelerator))
        return qr

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        self._read()
        it = self.items.get(("queued", zone, qr_id))
        return None if it is None else self._queued_info(it)

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        self._read()
        return [
            self._queued_info(it)
            for it in self.items.values()
            if it.kind == "queued" and it.zone == zone
        ]

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        self._call()
        it = self.items.pop(("queued", zone, qr_id), None)
        if it is not None:
            self.deleted.append(it)
            node = self.items.get(("node", zone, it.node_id))
            if node is not None and node.labels == it.labels:  # its own node goes with it
                self.deleted.append(self.items.pop(("node", zone, it.node_id)))

    def queued_gone(self, zone: str, qr_id: str) -> bool:
        return self.get_queued(zone, qr_id) is None and all(
            q.name != qr_id for q in self.list_queued(zone)
        )

    # -- what things mean: the TPU API's rules, as TpuCloud answers them ------------------
    def not_deletable_yet(self, err: BaseException) -> bool:
        return google_errors.not_deletable_yet(err)

    def bills_in_state(self, kind: str, state: str) -> bool:
        return tpu_states.bills_in_state(kind, state)

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        return NodeIdentity(node.uid, node.create_time)

    def list_zones(self) -> list[str]:
        self._read()
        return sorted({it.zone for it in self.items.values()} | {"us-central1-a"})
