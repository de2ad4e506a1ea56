"""In-memory stand-ins for Google and the workers, for unit tests of the safety core.

:class:`MemoryCloud` implements the ``Cloud`` protocol over two dicts, on its own: it shares no
code with :class:`~tpuwizard.core.cloud.tpu.client.TpuCloud`, so every lifecycle rule tested against
it holds for any backend that keeps the protocol's promises. It behaves as Google does where a
naive stand-in would not (reference/google-behaviour.md), using the sandbox's model of Google
(``tpuwizard.sandbox.google``) for the zones and the words of its errors:

* a create answers at once; the node is CREATING for ``delay`` seconds (``slow_create``), then
  READY (0: READY at once). A queued request is ACCEPTED, then ACTIVE with its node; the node's
  name already taken, it goes FAILED;
* a delete's operation done does not mean gone (``lying_delete``); gone is a get that answers
  NotFound *and* a zone list that no longer holds it (``listed_after_delete``);
* a delete right after the create is refused "not in a deletable state";
* errors arrive as the TPU API's REST client raises them (its 503 and 429 retried on reads and
  deletes, never on creates), the zone the project may not use (europe-west1-b) answers 403 and
  one the API does not know 404.

Faults come as the sandbox's: a :class:`~tpuwizard.sandbox.faults.Faults` from the same spec
(``MemoryCloud.faulty("lying_delete=1;lost_create=1")``), carried out the same way; the
HTTP-level ones through the sandbox's own :func:`~tpuwizard.sandbox.injected.injected_error`.
The IAM faults (``sa_no_delete``, ``policy_unreadable``) concern calls the protocol does not make.
Not modelled: a Flex-start run's end (SUSPENDED after ``max_run_seconds``).

What exists and how time passes is in ``tests/memory_world.py``. Not faults but instruments:
every call is logged in ``calls``; ``on_create`` and ``on_delete`` see the world at the moment of
a call; ``crash_at`` makes every call from that number on raise :class:`Crash`, as if the process
died there.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Self

from google.api_core import exceptions as gx

from tests.memory_world import (
    Crash,
    Key,
    Making,
    MemoryOperation,
    MemoryWorld,
    as_raised,
    foreign_node,
    foreign_queued,
    pause,
    same_instance,
)
from tpuwizard.core.cloud import google_errors
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.protocol import NodeIdentity, Part
from tpuwizard.core.cloud.tpu import states as tpu_states
from tpuwizard.core.cloud.tpu.queued import QUEUE_WAITING, ended_error, route_of
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.errors import CreateFailed, QueueExpired, RemoteError, WaitTimedOut
from tpuwizard.core.remote.transports import Result, Transport
from tpuwizard.sandbox import google
from tpuwizard.sandbox.faults import parse_faults

__all__ = [
    "Crash",
    "FakeTransport",
    "MemoryCloud",
    "foreign_node",
    "foreign_queued",
    "same_instance",
]


@dataclass
class MemoryCloud(MemoryWorld):
    """The ``Cloud`` protocol over the world of :class:`~tests.memory_world.MemoryWorld`."""

    @classmethod
    def faulty(cls, spec: str, **fields: Any) -> Self:
        """A cloud with the faults of a sandbox spec, e.g. ``"lying_delete=1"``."""
        return cls(faults=parse_faults(spec, memory=True), **fields)

    def queues(self, route: str) -> bool:
        return self.backend is Backend.TPU_API and route in ("spot", "flex")

    def _body(self, req: NodeRequest) -> dict[str, Any]:
        """The parts of the REST body that the sandbox's create faults look at."""
        body: dict[str, Any] = {"acceleratorType": req.accelerator_type}
        if req.spot:
            body["schedulingConfig"] = {"spot": True}
        if req.service_account_body is not None:
            body["serviceAccount"] = req.service_account_body
        return body

    def create_node(
        self, req: NodeRequest, on_part: Callable[[Part], None] | None = None
    ) -> MemoryOperation:
        self._connect_for_create()
        self._request("create_node", req.zone, req.node_id, "POST", self._body(req))
        if self.on_create:
            self.on_create(req.zone, req.node_id)
        key = (req.zone, req.node_id)
        if key in self.nodes:
            raise gx.Conflict(f"Resource '{req.node_id}' already exists.")
        self.nodes[key] = node = self._node_info(req)
        self.created.append(node)
        stockout = req.zone in self.faults.stockout
        now = time.time()
        self._making[("node", *key)] = Making(
            "node", now, now + self._provisioning(), req.spot, stockout
        )
        operation = self._operations[key] = MemoryOperation(self, key, req.spot)
        self._advance()
        if self.faults.take("lost_create"):  # carried out, but the answer is lost
            raise gx.ServiceUnavailable("The service is currently unavailable.")
        self._answer_lost_on_the_way()
        return operation

    def _connect_for_create(self) -> None:
        """refused_create: no connection is made (the network is down): nothing is sent. As
        Google's REST clients raise it: requests' ConnectionError over urllib3's
        NewConnectionError."""
        import requests
        import urllib3

        if self.faults.take("refused_create"):
            refused = ConnectionRefusedError(111, "Connection refused")
            new = urllib3.exceptions.NewConnectionError(None, f"Failed to connect: {refused}")  # type: ignore[arg-type]
            new.__cause__ = refused
            raise requests.ConnectionError(urllib3.exceptions.MaxRetryError(None, "/", new))  # type: ignore[arg-type]

    def _answer_lost_on_the_way(self) -> None:
        """reset_create / timeout_create: carried out, then the connection reset, or the answer
        never came (a read timeout), as requests raises them."""
        import http.client

        import requests
        import urllib3

        if self.faults.take("reset_create"):
            reset = ConnectionResetError(104, "Connection reset by peer")
            raise requests.ConnectionError(
                urllib3.exceptions.ProtocolError("Connection aborted.", reset)
            )
        if self.faults.take("timeout_create"):
            raise requests.ReadTimeout(
                urllib3.exceptions.ReadTimeoutError(None, "/", "Read timed out."),  # type: ignore[arg-type]
                http.client.HTTPException(),
            )

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        try:
            self._request("get_node", zone, node_id, "GET")
        except gx.NotFound:  # as the client: a NotFound (even the location's) is "not there"
            return None
        return self.nodes.get((zone, node_id))

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        self._request("list_nodes", zone, "", "GET")
        found = [n for (z, _), n in self.nodes.items() if z == zone]
        found += [replace(n, state="DELETING") for (z, _), n in self._ghosts.items() if z == zone]
        want = labels or {}
        return [n for n in found if all(n.labels.get(k) == v for k, v in want.items())]

    def _refuse_early_delete(self, kind: str, key: Key) -> None:
        """google-behaviour.md: a delete while it is still being made can be refused."""
        making = self._making.get((kind, *key))
        young = min(making.done_at - making.started, google.UNDELETABLE_S) if making else 0.0
        if making is not None and time.time() - making.started < young:
            raise as_raised(google.not_deletable(key[1]), "DELETE", "")

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        try:
            self._request("delete_node", zone, node_id, "DELETE")
        except gx.NotFound:
            return
        if self.on_delete:
            self.on_delete(zone, node_id)
        key = (zone, node_id)
        node = self.nodes.get(key)
        if node is None:  # already gone; a half-deleted one finishes now
            self._ghosts.pop(key, None)
            return
        if node.queued_resource:
            raise gx.FailedPrecondition(
                f"Node {node_id} belongs to queued resource {node.queued_resource}: "
                "delete the queued resource instead."
            )
        self._refuse_early_delete("node", key)
        if self.faults.take("delete_fail"):
            raise gx.InternalServerError("Internal error while deleting the node.")
        if self.faults.take("lying_delete"):  # done, no error, and nothing happened
            return
        self.deleted.append(self.nodes.pop(key))
        self._making.pop(("node", *key), None)
        if self.faults.take("listed_after_delete"):
            self._ghosts[key] = node

    # -- queued resources ------------------------------------------------------------------
    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        self._connect_for_create()
        body: dict[str, Any] = {"tpu": {"nodeSpec": [{"node": self._body(req)}]}}
        if route == "spot":
            body["spot"] = {}
        elif route == "flex":
            body["provisioningModel"] = "FLEX_START"
        self._request("create_queued", req.zone, qr_id, "POST", body)
        if self.on_create:
            self.on_create(req.zone, qr_id)
        key = (req.zone, qr_id)
        if key in self.queued:
            raise gx.Conflict(f"Resource '{qr_id}' already exists.")
        wait = req.queue_wait_s
        self.queued[key] = qr = QueuedInfo(
            qr_id,
            req.zone,
            "ACCEPTED",
            req.node_id,
            req.accelerator_type,
            dict(req.labels),
            flex=route == "flex",
            create_time=self._now(),
            spot=route == "spot",
            valid_until_s=wait,
        )
        self._max_run[key] = max_run_seconds if route == "flex" else None
        self.created.append(qr)
        now = time.time()
        self._making[("queued", *key)] = Making(
            "queued",
            now,
            now + self._provisioning(),
            route == "spot",
            req.zone in self.faults.stockout,
            None if wait is None else now + wait,
        )
        self._advance()
        if self.faults.take("lost_create"):
            raise gx.ServiceUnavailable("The service is currently unavailable.")
        self._answer_lost_on_the_way()

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        try:
            self._request("get_queued", zone, qr_id, "GET")
        except gx.NotFound:
            return None
        return self.queued.get((zone, qr_id))

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        self._request("list_queued", zone, "", "GET")
        return [q for (z, _), q in self.queued.items() if z == zone]

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        """With force, as tpuwizard always asks: the request's node goes with it."""
        try:
            self._request("delete_queued", zone, qr_id, "DELETE")
        except gx.NotFound:
            return
        if self.on_delete:
            self.on_delete(zone, qr_id)
        key = (zone, qr_id)
        qr = self.queued.get(key)
        if qr is None:
            return
        self._refuse_early_delete("queued", key)
        if self.faults.take("lying_delete"):
            return
        self.deleted.append(self.queued.pop(key))
        self._making.pop(("queued", *key), None)
        node = self.nodes.get((zone, qr.node_id))
        if node is not None and node.queued_resource == qr_id:  # its own node, not a namesake
            self.deleted.append(self.nodes.pop((zone, qr.node_id)))

    # -- waits and "gone": the protocol's promises, kept here on their own -----------------
    def wait_for_node(
        self,
        zone: str,
        node_id: str,
        operation: object = None,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 1800,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> NodeInfo:
        op = operation if isinstance(operation, MemoryOperation) else None
        deadline, seen = time.monotonic() + timeout, None
        while True:
            error = op.exception() if op is not None else None
            if op is not None and error is not None:  # a stockout's error is the news
                raise CreateFailed(error, route="spot" if op.spot else None)
            node = self.get_node(zone, node_id)
            state = node.state if node is not None else "NOT_FOUND"
            if state != seen and on_state is not None:
                on_state(state)
            seen = state
            if node is not None and state == "READY":
                return node
            if state in ("PREEMPTED", "TERMINATED"):
                raise CreateFailed(RuntimeError(f"the node became {state} before it was ready"))
            if node is None and (op is None or op.done()):
                raise CreateFailed(RuntimeError("the node disappeared while it was created"))
            if time.monotonic() >= deadline:
                raise WaitTimedOut(f"node {node_id}", state, timeout)
            pause(poll, cancelled)

    def wait_for_queued(
        self,
        zone: str,
        qr_id: str,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 3600,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> QueuedInfo:
        deadline, seen = time.monotonic() + timeout, None
        last: QueuedInfo | None = None
        while True:
            qr = self.get_queued(zone, qr_id)
            state = qr.state if qr is not None else "NOT_FOUND"
            if state != seen and on_state is not None:
                on_state(state)
            seen = state
            if qr is None:
                raise CreateFailed(RuntimeError("the queued resource is NOT_FOUND"))
            if state == "ACTIVE":
                return qr
            if state in ("FAILED", "SUSPENDED"):  # what Google's reason means, as for any cloud
                raise ended_error(qr, last.state if last else "CREATING", time.time())
            last = qr
            if time.monotonic() >= deadline:
                timed_out = WaitTimedOut(f"queued resource {qr_id}", state, timeout)
                if state in QUEUE_WAITING:  # still waiting for capacity: the queue ran out
                    raise QueueExpired(qr_id, state, timeout, timed_out, route_of(qr))
                raise timed_out
            pause(poll, cancelled)

    def node_gone(self, zone: str, node_id: str) -> bool:
        if self.get_node(zone, node_id) is not None:
            return False
        return all(n.name != node_id for n in self.list_nodes(zone))

    def queued_gone(self, zone: str, qr_id: str) -> bool:
        if self.get_queued(zone, qr_id) is not None:
            return False
        return all(q.name != qr_id for q in self.list_queued(zone))

    # -- what things mean: the TPU API's rules ---------------------------------------------
    def list_zones(self) -> list[str]:
        self._request("list_zones", "", "", "GET")
        return google.location_ids()  # every zone, the one this project may not use among them

    def not_deletable_yet(self, err: BaseException) -> bool:
        return google_errors.not_deletable_yet(err)

    def bills_in_state(self, kind: str, state: str) -> bool:
        return tpu_states.bills_in_state(kind, state)

    def parts_of(
        self, kind: str, zone: str, name: str, node_id: str | None, accelerator: str | None = None
    ) -> list[Part]:
        return [Part("node", zone, node_id)] if kind == "queued" and node_id else []

    def part_labels(self, part: Part) -> dict[str, str] | None:
        return None  # the TPU API's parts are nodes

    def part_gone(self, part: Part) -> bool:
        return True

    def deadline_at(self, kind: str, zone: str, name: str) -> float | None:
        qr = self.queued.get((zone, name)) if kind == "queued" else None
        return qr.ends_at if qr is not None else None

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        return NodeIdentity(node.uid, node.create_time)

    # -- for the tests ---------------------------------------------------------------------
    def add(self, resource: NodeInfo | QueuedInfo) -> None:
        """Put a resource there as someone else made it (by hand, or another install)."""
        table: dict[Key, Any] = self.nodes if isinstance(resource, NodeInfo) else self.queued
        table[(resource.zone, resource.name)] = resource

    def count(self, method: str) -> int:
        return sum(c.method == method for c in self.calls)


class FakeTransport(Transport):
    """Workers that answer but run nothing: uploads are kept, every command exits 1.

    Enough for a launch to reach its workers and then fail its first job, which sends it to
    teardown. ``reachable=False`` makes the workers never answer instead.
    """

    def __init__(self, workers: int = 1, reachable: bool = True) -> None:
        self.workers = workers
        self.reachable = reachable
        self.files: dict[tuple[int, str], bytes] = {}
        self.commands: list[tuple[int, str]] = []

    def argv(self, worker: int, command: str) -> list[str]:
        raise AssertionError("an in-memory worker starts no process")

    def run(
        self,
        worker: int,
        command: str,
        timeout: float = 600,
        stdin: bytes | None = None,
        cancellable: bool = True,
    ) -> Result:
        self.commands.append((worker, command))
        return Result(1, "", "in-memory worker: no shell here")

    def popen(self, worker: int, command: str) -> subprocess.Popen[bytes]:
        raise RemoteError(f"worker {worker}: in-memory worker: no shell here")

    def upload(self, worker: int, data: bytes, remote_path: str, mode: str = "600") -> None:
        self.files[(worker, remote_path)] = data

    def fetch(self, worker: int, remote_path: str) -> bytes:
        try:
            return self.files[(worker, remote_path)]
        except KeyError:
            raise RemoteError(f"worker {worker}: cannot read {remote_path}") from None

    def wait_until_reachable(self, timeout: float = 300, interval: float = 2.0) -> None:
        if not self.reachable:
            raise RemoteError("worker 0 is not reachable: in-memory worker set unreachable")


def checked(plan: Any) -> Any:
    """A test's own LaunchPlan as if every check before create let it through: what
    ``Session.start_launch`` takes (the pipeline before create is its own tests' subject)."""
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.launch_plan import ready_timeout_s

    asked = LaunchAnswers(plan.where)
    choice = BackendChoice(plan.backend, "", "")
    return CheckedPlan(asked, plan, choice, ready_timeout_s(plan.route))


def proven_workers(monkeypatch: Any) -> None:
    """The in-memory workers set up and pass the verifier (a :class:`FakeTransport` runs
    nothing): a launch that keeps its node hands it over only once it is proven
    (core/launch/lifecycle/ending.py), so a test of what a kept node leaves needs this."""
    from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps

    monkeypatch.setattr(WorkerSteps, "bootstrap", lambda self, transport: None)
    monkeypatch.setattr(WorkerSteps, "verify", lambda self, t: setattr(self, "receipt_ok", True))
