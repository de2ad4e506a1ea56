"""In-memory stand-ins for the cloud and the workers, for unit tests of the safety core.

``FakeCloud`` is a :class:`TpuCloud` whose API calls touch a dict instead of the network. Only the
calls that reach Google are replaced: ``node_gone``, ``queued_gone``, ``wait_for_node`` and
``wait_for_queued`` are the real ones, so what "verified gone" means is the code under test.

Faults, each a counter used up one call at a time:

* ``lost_create_answers``: the create is carried out, then the call raises a 503;
* ``unavailable_creates``: the create is not carried out and the call raises a 503;
* ``lying_deletes``: the delete returns as if it worked, but the resource stays;
* ``listed_after_delete``: the delete works for ``get``, but the list still shows the resource.

``refusing_zones`` maps a zone to the error every call there raises, as Google answers a zone this
project may not use (403 "Location Z is not found or access is unauthorized.") or does not know
(404 "Location ... was not found."); :func:`zone_forbidden` and :func:`zone_unknown` make them.

Hooks let a test look at the world at the moment of a call: ``on_create`` and ``on_delete``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from google.api_core import exceptions as gx

from tpuwizard.core.cloud.client import TpuCloud
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.transports import Result, Transport


class DoneOperation:
    """A create operation that finished without an error."""

    def done(self, retry: object = None) -> bool:
        return True

    def exception(self) -> BaseException | None:
        return None


@dataclass
class Call:
    method: str
    zone: str
    name: str


@dataclass
class FakeCloud(TpuCloud):
    project: str = "practice-project"
    nodes: dict[tuple[str, str], NodeInfo] = field(default_factory=dict)
    queued: dict[tuple[str, str], QueuedInfo] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    lost_create_answers: int = 0
    unavailable_creates: int = 0
    lying_deletes: int = 0
    listed_after_delete: int = 0
    on_create: Callable[[str, str], None] | None = None  # (zone, name)
    on_delete: Callable[[str, str], None] | None = None
    # What the inherited polling and retry code reads from a real client.
    endpoint: str = "memory://"
    retry: object = None
    timeout: float = 1.0
    # Deleted for get, still in the list until the next delete of the same name.
    ghosts: dict[tuple[str, str], NodeInfo] = field(default_factory=dict)
    refusing_zones: dict[str, Exception] = field(default_factory=dict)

    def _in(self, method: str, zone: str, name: str) -> None:
        """Log the call; in a refusing zone, answer with that zone's error."""
        self.calls.append(Call(method, zone, name))
        if zone in self.refusing_zones:
            raise self.refusing_zones[zone]

    # -- nodes ------------------------------------------------------------------------------
    def create_node(self, req: NodeRequest) -> DoneOperation:
        self._in("create_node", req.zone, req.node_id)
        if self.on_create:
            self.on_create(req.zone, req.node_id)
        if self.unavailable_creates:
            self.unavailable_creates -= 1
            raise gx.ServiceUnavailable("The service is currently unavailable.")
        key = (req.zone, req.node_id)
        if key in self.nodes:
            raise gx.Conflict(f"Resource '{req.node_id}' already exists.")
        self.nodes[key] = self._node(req)
        if self.lost_create_answers:
            self.lost_create_answers -= 1
            raise gx.ServiceUnavailable("The service is currently unavailable.")
        return DoneOperation()

    def _node(self, req: NodeRequest, queued_resource: str | None = None) -> NodeInfo:
        vms = catalog.parse_accelerator(req.accelerator_type).vms
        return NodeInfo(
            name=req.node_id,
            zone=req.zone,
            accelerator_type=req.accelerator_type,
            state="READY",
            labels=dict(req.labels),
            endpoints=("127.0.0.1",) * vms,
            queued_resource=queued_resource,
            spot=req.spot,
        )

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        try:
            self._in("get_node", zone, node_id)
        except gx.NotFound:  # as the real client: a NotFound (even the location's) is None
            return None
        return self.nodes.get((zone, node_id))

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        self._in("list_nodes", zone, "")
        found = [n for (z, _), n in self.nodes.items() if z == zone]
        found += [replace(n, state="DELETING") for (z, _), n in self.ghosts.items() if z == zone]
        return [n for n in found if all(n.labels.get(k) == v for k, v in (labels or {}).items())]

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        self._in("delete_node", zone, node_id)
        if self.on_delete:
            self.on_delete(zone, node_id)
        if self.lying_deletes:
            self.lying_deletes -= 1
            return
        node = self.nodes.pop((zone, node_id), None)
        if node is not None and self.listed_after_delete:
            self.listed_after_delete -= 1
            self.ghosts[(zone, node_id)] = node
        elif node is None:
            self.ghosts.pop((zone, node_id), None)

    # -- queued resources -------------------------------------------------------------------
    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        self._in("create_queued", req.zone, qr_id)
        if self.on_create:
            self.on_create(req.zone, qr_id)
        if self.unavailable_creates:
            self.unavailable_creates -= 1
            raise gx.ServiceUnavailable("The service is currently unavailable.")
        if (req.zone, qr_id) in self.queued:
            raise gx.Conflict(f"Resource '{qr_id}' already exists.")
        self.queued[(req.zone, qr_id)] = QueuedInfo(
            qr_id,
            req.zone,
            "ACTIVE",
            req.node_id,
            req.accelerator_type,
            dict(req.labels),
            flex=route == "flex",
        )
        self.nodes[(req.zone, req.node_id)] = self._node(req, queued_resource=qr_id)
        if self.lost_create_answers:
            self.lost_create_answers -= 1
            raise gx.ServiceUnavailable("The service is currently unavailable.")

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        try:
            self._in("get_queued", zone, qr_id)
        except gx.NotFound:  # as the real client: a NotFound (even the location's) is None
            return None
        return self.queued.get((zone, qr_id))

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        self._in("list_queued", zone, "")
        return [q for (z, _), q in self.queued.items() if z == zone]

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        self._in("delete_queued", zone, qr_id)
        if self.on_delete:
            self.on_delete(zone, qr_id)
        if self.lying_deletes:
            self.lying_deletes -= 1
            return
        qr = self.queued.pop((zone, qr_id), None)
        if qr is not None:
            self.nodes.pop((zone, qr.node_id), None)

    def list_zones(self) -> list[str]:
        # Google lists every zone, one the project may not use among them (gb:44).
        held = {z for z, _ in self.nodes} | {z for z, _ in self.queued} | {"us-central1-a"}
        return sorted(held | set(self.refusing_zones))

    # -- for the tests ----------------------------------------------------------------------
    def count(self, method: str) -> int:
        return sum(c.method == method for c in self.calls)


def zone_forbidden(zone: str) -> Exception:
    """Google's answer in a zone this project may not use (google-behaviour.md, errors)."""
    return gx.Forbidden(f"Location {zone} is not found or access is unauthorized.")


def zone_unknown(zone: str, project: str = "practice-project") -> Exception:
    """The answer for a zone the TPU API does not know (the sandbox's 404)."""
    return gx.NotFound(f"Location projects/{project}/locations/{zone} was not found.")


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
        self, worker: int, command: str, timeout: float = 600, stdin: bytes | None = None
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
