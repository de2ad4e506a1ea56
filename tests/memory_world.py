"""The world behind :class:`tests.fakes.MemoryCloud`: what exists, how Google answers a call
before carrying it out, and how time passes (a create finishes, a spot node is preempted).

Kept apart from the calls the ``Cloud`` protocol names, which are in ``tests/fakes.py``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import requests
from google.api_core import exceptions as gx

from tpuwizard.core.cancel import Cancelled
from tpuwizard.core.cloud import google_errors
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox import google
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.injected import injected_error
from tpuwizard.sandbox.model import ApiError

Key = tuple[str, str]  # (zone, name)


class Crash(BaseException):
    """The process died here (a BaseException: no ``except Exception`` swallows it)."""


@dataclass
class Call:
    method: str
    zone: str
    name: str


@dataclass
class Making:
    """A create under way: what it becomes, and when."""

    kind: str  # node or queued
    started: float
    done_at: float
    spot: bool
    stockout: bool
    valid_until: float | None = None  # a queued request's validUntilDuration, as a time


class MemoryOperation:
    """A node's create operation: done once the create has finished, with its error if any."""

    def __init__(self, cloud: MemoryWorld, key: Key, spot: bool) -> None:
        self.cloud, self.key, self.spot = cloud, key, spot
        self.error: Exception | None = None

    def done(self, retry: object = None) -> bool:
        self.cloud._advance()
        return self.key not in self.cloud._making or self.error is not None

    def exception(self) -> Exception | None:
        return self.error if self.done() else None


@cache
def _zones() -> frozenset[str]:
    return frozenset(google.api_zone_table())


def as_raised(err: ApiError, method: str, path: str) -> gx.GoogleAPICallError:
    """The sandbox's error as the REST client raises it (from the same JSON body)."""
    response = requests.Response()
    response.status_code = err.http
    body = {"code": err.http, "message": err.message, "status": err.status, "details": err.details}
    response._content = json.dumps({"error": body}).encode()
    response.request = requests.Request(method, f"http://127.0.0.1{path}").prepare()
    return gx.from_http_response(response)


@dataclass
class MemoryWorld:
    """What the in-memory cloud holds, and its instruments (see tests/fakes.py)."""

    project: str = "practice-project"
    # COMPUTE: Compute Engine's shape, every route one instance (queues() is False for all).
    backend: Backend = Backend.TPU_API
    faults: Faults = field(default_factory=Faults)
    delay: float = 0.0  # provisioning time, unless faults.slow_create says otherwise
    nodes: dict[Key, NodeInfo] = field(default_factory=dict)
    queued: dict[Key, QueuedInfo] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    created: list[NodeInfo | QueuedInfo] = field(default_factory=list)  # as first made
    deleted: list[NodeInfo | QueuedInfo] = field(default_factory=list)  # as when deleted
    on_create: Callable[[str, str], None] | None = None  # (zone, name)
    on_delete: Callable[[str, str], None] | None = None
    crash_at: int | None = None
    _making: dict[tuple[str, str, str], Making] = field(default_factory=dict)
    _operations: dict[Key, MemoryOperation] = field(default_factory=dict)
    _ghosts: dict[Key, NodeInfo] = field(default_factory=dict)  # deleted, still listed
    _ready_at: dict[Key, float] = field(default_factory=dict)  # for preempt_after
    _max_run: dict[Key, int | None] = field(default_factory=dict)  # Flex-start requests' runs
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _last_time: float = 0.0
    # A fan-out's requests call from several threads at once: time passes for one at a time.
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # -- every call comes through here -----------------------------------------------------
    def _request(self, method: str, zone: str, name: str, http: str, body: Any = None) -> None:
        """Log the call, then answer as Google's REST client would before doing anything:
        an injected fault, a zone that refuses; and let time pass."""
        self.calls.append(Call(method, zone, name))
        if self.crash_at is not None and len(self.calls) >= self.crash_at:
            raise Crash()
        if self.faults.latency_ms:
            time.sleep(self.faults.latency_ms / 1000)
        collection = "queuedResources" if "queued" in method else "nodes"
        path = f"/v2/projects/{self.project}/locations/{zone}/{collection}"
        if name and not method.startswith("create"):
            path += f"/{name}"
        creates = method.startswith("create")
        while (err := injected_error(self.faults, http, path, body or {})) is not None:
            raised = as_raised(err, http, path)
            if not creates and isinstance(raised, gx.TooManyRequests | gx.ServiceUnavailable):
                continue  # the client retries these on reads and deletes, never on creates
            if creates and err.http == 429 and google_errors.quota_refusal(raised):
                raise gx.ResourceExhausted(raised.message, details=raised.details)
            raise raised
        if zone in google.FORBIDDEN_ZONES:
            raise as_raised(google.location_forbidden(zone), http, path)
        if zone and zone not in _zones():
            unknown = f"Location projects/{self.project}/locations/{zone} was not found."
            raise as_raised(ApiError(404, "NOT_FOUND", unknown), http, path)
        self._advance()

    def _now(self) -> float:
        """The time of an event, later than every earlier one (create times tell instances
        apart)."""
        self._last_time = max(time.time(), self._last_time + 1e-6)
        return self._last_time

    def _provisioning(self) -> float:
        return self.faults.slow_create if self.faults.slow_create is not None else self.delay

    # -- time passes -----------------------------------------------------------------------
    def _advance(self) -> None:
        with self._lock:
            self._advance_locked()

    def _advance_locked(self) -> None:
        now = time.time()
        for (kind, zone, name), making in list(self._making.items()):
            if kind == "node":
                self._advance_node((zone, name), making, now)
            else:
                self._advance_queued((zone, name), making, now)
        if self.faults.preempt_after is not None:
            for key, node in list(self.nodes.items()):
                ready_at = self._ready_at.get(key)
                if node.spot and ready_at and now >= ready_at + self.faults.preempt_after:
                    self.nodes[key] = replace(node, state="PREEMPTED", endpoints=())
                    del self._ready_at[key]

    def _make_ready(self, key: Key) -> None:
        node = self.nodes.get(key)
        if node is not None and node.state == "CREATING" and not self.faults.never_ready:
            self.nodes[key] = replace(node, state="READY")
            self._ready_at[key] = time.time()

    def _advance_node(self, key: Key, making: Making, now: float) -> None:
        if now < making.done_at:
            return
        del self._making[("node", *key)]
        if making.stockout:  # the operation ends with Google's code and text, the node goes
            self.nodes.pop(key, None)
            error = google.stockout(key[0], self.faults.stockout_code)
            self._operations[key].error = gx.from_grpc_status(error["code"], error["message"])
        else:
            self._make_ready(key)

    def _advance_queued(self, key: Key, making: Making, now: float) -> None:
        qr = self.queued.get(key)
        if qr is None:
            del self._making[("queued", *key)]
            return
        refused = making.spot and self.faults.stockout_code in (13, 5)
        if making.valid_until is not None and now >= making.valid_until:
            self._fail(key, google.queue_expired())
        elif making.stockout and refused:  # a spot create refused outright
            self._fail(key, google.stockout(key[0], self.faults.stockout_code))
        elif making.stockout:
            self.queued[key] = replace(qr, state="WAITING_FOR_RESOURCES")
        elif now >= making.done_at:
            del self._making[("queued", *key)]
            node_key = (key[0], qr.node_id)
            if node_key in self.nodes:  # the request cannot get a node of a name taken
                taken = {"code": 6, "message": f"Resource '{qr.node_id}' already exists."}
                self.queued[key] = replace(qr, state="FAILED", error=taken)
                return
            self.nodes[node_key] = self._node_info(
                NodeRequest(
                    key[0], qr.node_id, parse_accelerator(qr.accelerator_type), "", spot=qr.spot
                ),
                labels=qr.labels,
                queued_resource=qr.name,
            )
            self._make_ready(node_key)
            # Flex-start: Google sets the run's end once the request is granted.
            max_run = self._max_run.get(key)
            ends_at = now + max_run if max_run else None
            self.queued[key] = replace(qr, state="ACTIVE", ends_at=ends_at)

    def _fail(self, key: Key, error: dict[str, Any]) -> None:
        self._making.pop(("queued", *key), None)
        self.queued[key] = replace(self.queued[key], state="FAILED", error=error)

    # -- nodes -----------------------------------------------------------------------------
    def _node_info(
        self, req: NodeRequest, labels: dict[str, str] | None = None, queued_resource: str = ""
    ) -> NodeInfo:
        vms = req.slice.vms
        return NodeInfo(
            name=req.node_id,
            zone=req.zone,
            accelerator_type=req.accelerator_type,
            state="CREATING",
            labels=dict(req.labels if labels is None else labels),
            create_time=self._now(),
            endpoints=("127.0.0.1",) * vms,
            queued_resource=queued_resource or None,
            spot=req.spot,
            uid=str(google.NODE_ID_BASE + next(self._ids)),
        )


_foreign_ids = itertools.count(1)


def foreign_node(
    zone: str, name: str, labels: dict[str, str], accelerator: str = "v5litepod-4"
) -> NodeInfo:
    """A READY node someone else made (by hand, or another install), for :meth:`MemoryCloud.add`."""
    return NodeInfo(
        name,
        zone,
        accelerator,
        "READY",
        dict(labels),
        create_time=1.0,
        endpoints=("127.0.0.1",) * catalog.parse_accelerator(accelerator).vms,
        uid=str(next(_foreign_ids)),
    )


def foreign_queued(
    zone: str, name: str, node_id: str, labels: dict[str, str], accelerator: str = "v5litepod-4"
) -> QueuedInfo:
    """An ACTIVE queued request someone else made."""
    return QueuedInfo(name, zone, "ACTIVE", node_id, accelerator, dict(labels), create_time=1.0)


def same_instance(a: NodeInfo | QueuedInfo | None, b: NodeInfo | QueuedInfo | None) -> bool:
    """Is ``a`` the very resource ``b`` was, whatever its state now? A name can be reused after
    a delete; a node's numeric id cannot, nor (in this cloud) a request's create time."""
    if a is None or b is None or type(a) is not type(b) or a.name != b.name:
        return False
    if isinstance(a, NodeInfo) and isinstance(b, NodeInfo):
        return a.uid == b.uid
    return a.create_time == b.create_time


def pause(seconds: float, cancelled: Callable[[], bool] | None) -> None:
    end = time.monotonic() + seconds
    while True:
        if cancelled is not None and cancelled():
            raise Cancelled("stopped while waiting")
        if (left := end - time.monotonic()) <= 0:
            return
        time.sleep(min(left, 0.05))
