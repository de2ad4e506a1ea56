"""TpuCloud: the only place that talks to the Cloud TPU API.

It wraps ``google.cloud.tpu_v2.TpuClient`` over REST (the async client has no REST transport) and,
for Flex-start, which the Python package does not know, the v2alpha1 REST API through google-auth's
``AuthorizedSession``. Calls are blocking: front ends run them in threads. Every call has a
timeout; reads and deletes retry 429/503 with jittered backoff; creates are never retried blindly.
Results are plain dataclasses, so nothing outside this module handles protobufs.

The endpoint comes from ``TPUWIZARD_TPU_ENDPOINT`` when set (this is how the sandbox is reached),
else Google's. Another endpoint gets ``TPUWIZARD_SANDBOX_TOKEN`` as a static bearer token when
that is set, else anonymous credentials.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud import google_errors
from tpuwizard.core.cloud.backends import TPU_API
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, GOOGLE_ENDPOINT
from tpuwizard.core.cloud.google_calls import (
    at_once,
    credentials_for,
    quota_is_final,
    retry_reads,
)
from tpuwizard.core.cloud.polling import poll_until
from tpuwizard.core.cloud.protocol import NodeIdentity, Part
from tpuwizard.core.cloud.tpu import states as tpu_states
from tpuwizard.core.cloud.tpu.queued import (
    QUEUE_WAITING,
    AlphaOperation,
    QueuedCalls,
    alpha_node_body,
    ended_error,
    made_by,
    route_of,
)
from tpuwizard.core.cloud.types import CALL_TIMEOUT, NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.deadlines import READY_TIMEOUT_S
from tpuwizard.core.errors import CreateFailed, QueueExpired, WaitTimedOut
from tpuwizard.core.routes import Route


def location_parent(project: str, zone: str) -> str:
    """projects/P/locations/Z"""
    return f"projects/{project}/locations/{zone}"


def node_proto(tpu_v2: Any, req: NodeRequest, queued: bool = False) -> Any:
    """The node a request asks for, as the v2 client takes it."""
    node = tpu_v2.Node(
        accelerator_type=req.accelerator_type,
        runtime_version=req.runtime,
        labels=req.labels,
        metadata=req.metadata,
        # As gcloud does: external addresses unless --internal-ips.
        network_config=tpu_v2.NetworkConfig(enable_external_ips=req.external_ips),
    )
    if req.spot and not queued:  # a spot queued resource says so with spot {} alone
        node.scheduling_config = tpu_v2.SchedulingConfig(spot=True)
    account = req.service_account_body
    if account is not None:
        node.service_account = tpu_v2.ServiceAccount(**account)
    return node


class TpuCloud:
    """The ``Cloud`` protocol on the TPU API: nodes here, queued resources through
    :class:`QueuedCalls`, and the waits and "verified gone" checks over both."""

    backend = TPU_API

    def __init__(
        self,
        project: str,
        endpoint: str | None = None,
        credentials: Any = None,
        timeout: float = CALL_TIMEOUT,
        retry_deadline: float = 60.0,
    ) -> None:
        from google.cloud import tpu_v2

        self.project = project
        self.endpoint = endpoint or os.environ.get(ENDPOINT_ENV) or GOOGLE_ENDPOINT
        if credentials is None:
            credentials = credentials_for(self.endpoint)
        self.credentials = credentials
        self.timeout = timeout
        self.retry = retry_reads(retry_deadline)
        self.tpu_v2 = tpu_v2
        self._spot_nodes: set[tuple[str, str]] = set()  # Google refuses spot creates oddly
        self.client = tpu_v2.TpuClient(
            credentials=credentials,
            transport="rest",
            client_options={"api_endpoint": self.endpoint},
        )
        # Partials, not this cloud's own methods: a cycle through them kept every dropped
        # TpuCloud (and its HTTP connections' sockets) until the next full collection.
        self.queued_calls = QueuedCalls(
            self.client,
            tpu_v2,
            self.endpoint,
            credentials,
            timeout,
            self.retry,
            functools.partial(location_parent, project),
            functools.partial(node_proto, tpu_v2),
        )

    def queues(self, route: str) -> bool:
        """Spot and Flex-start nodes come through queued resources (google-behaviour.md)."""
        return route in (Route.SPOT, Route.FLEX)

    # -- names ------------------------------------------------------------------------------
    def parent(self, zone: str) -> str:
        return location_parent(self.project, zone)

    def node_path(self, zone: str, node_id: str) -> str:
        return f"{self.parent(zone)}/nodes/{node_id}"

    def queued_path(self, zone: str, qr_id: str) -> str:
        return self.queued_calls.queued_path(zone, qr_id)

    # -- catalog ------------------------------------------------------------------------------
    def list_zones(self) -> list[str]:
        from google.cloud.location import locations_pb2

        zones, token = [], ""
        while True:
            page = self.client.list_locations(
                locations_pb2.ListLocationsRequest(
                    name=f"projects/{self.project}", page_token=token
                ),
                retry=self.retry,
                timeout=self.timeout,
            )
            zones += [loc.location_id for loc in page.locations]
            token = page.next_page_token
            if not token:
                return sorted(zones)

    def accelerator_types(self, zone: str) -> list[str]:
        pager = self.client.list_accelerator_types(
            parent=self.parent(zone), retry=self.retry, timeout=self.timeout
        )
        return [a.type_ for a in pager]

    def runtime_versions(self, zone: str) -> list[str]:
        pager = self.client.list_runtime_versions(
            parent=self.parent(zone), retry=self.retry, timeout=self.timeout
        )
        return [r.version for r in pager]

    # -- nodes ------------------------------------------------------------------------------
    def create_node(self, req: NodeRequest, on_part: Callable[[Part], None] | None = None) -> Any:
        """Start creating a node; returns the operation to hand to :meth:`wait_for_node`.

        Not retried: if the call fails in a way that leaves its fate unknown, the caller checks
        with :meth:`get_node` (the ledger already holds the intent).
        """
        if req.spot:
            self._spot_nodes.add((req.zone, req.node_id))
        if req.autocheckpoint:  # only v2alpha1 knows autocheckpointEnabled; v2 would refuse it
            url = f"{self.endpoint}/v2alpha1/{self.parent(req.zone)}/nodes?nodeId={req.node_id}"
            with quota_is_final():
                answer = self.queued_calls._alpha("POST", url, alpha_node_body(req, queued=False))
            return AlphaOperation(self.queued_calls, f"{self.endpoint}/v2alpha1/{answer['name']}")
        with quota_is_final():
            return self.client.create_node(
                parent=self.parent(req.zone),
                node_id=req.node_id,
                node=node_proto(self.tpu_v2, req),
                timeout=self.timeout,
            )

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        from google.api_core import exceptions

        try:
            node = self.client.get_node(
                name=self.node_path(zone, node_id), retry=self.retry, timeout=self.timeout
            )
        except exceptions.NotFound:
            return None
        return self._node_info(node, zone)

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        """Every node in ``zone`` (the API has no label filter: it is applied here)."""
        pager = self.client.list_nodes(
            parent=self.parent(zone), retry=self.retry, timeout=self.timeout
        )
        nodes = [self._node_info(n, zone) for n in pager]
        want = labels or {}
        return [n for n in nodes if all(n.labels.get(k) == v for k, v in want.items())]

    def wait_for_node(
        self,
        zone: str,
        node_id: str,
        operation: Any = None,
        on_state: Callable[[str], None] | None = None,
        timeout: float = READY_TIMEOUT_S,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> NodeInfo:
        """Poll until the node is READY, reporting each state change.

        Raises :class:`CreateFailed` when the create operation ends in an error (a stockout is
        code 8), and :class:`WaitTimedOut` when ``timeout`` passes first.
        """

        def operation_failed() -> None:
            if operation is not None and operation.done(retry=self.retry):
                error = operation.exception()
                if error is not None:
                    spot = (zone, node_id) in self._spot_nodes
                    raise CreateFailed(error, route="spot" if spot else None)

        def read() -> NodeInfo | None:
            # The operation's error comes first: a stockout (code 8) removes the node, and
            # "it is gone" is not the news.
            operation_failed()
            node = self.get_node(zone, node_id)
            if node is None:
                operation_failed()  # it may have ended between the two reads
            return node

        def failure(node: NodeInfo | None, state: str) -> str | None:
            if state in ("PREEMPTED", "TERMINATED"):
                return f"the node became {state} before it was ready"
            if node is None and (operation is None or operation.done(retry=self.retry)):
                return "the node disappeared while it was created"
            return None

        return poll_until(
            f"node {node_id}",
            read,
            "READY",
            failure,
            on_state,
            timeout,
            poll,
            cancelled,
        )

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        """Delete and wait for the operation; a node that is already gone is fine."""
        from google.api_core import exceptions

        try:
            op = self.client.delete_node(
                name=self.node_path(zone, node_id), retry=self.retry, timeout=self.timeout
            )
        except exceptions.NotFound:
            return
        op.result(timeout=timeout, retry=self.retry)

    def node_gone(self, zone: str, node_id: str) -> bool:
        """Verified: ``get`` says NotFound and the zone's list no longer holds it (both asked
        at once)."""
        found, listed = at_once(lambda: self.get_node(zone, node_id), lambda: self.list_nodes(zone))
        return found is None and all(n.name != node_id for n in listed)

    # -- queued resources -------------------------------------------------------------------
    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        """See :meth:`QueuedCalls.create_queued`; a quota refusal is never retried."""
        with quota_is_final():
            self.queued_calls.create_queued(req, qr_id, route, max_run_seconds)

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        return self.queued_calls.get_queued(zone, qr_id)

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        return self.queued_calls.list_queued(zone)

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        """Delete the request and the node it made, and wait; already gone is fine.

        ``force`` (which deletes the request's nodes first) is sent only when the node under
        the request's node id is absent or the request's own: a node of that name that the
        request did not make (someone's, made before; the request then FAILED) is never within
        reach of the delete, whatever the server makes of ``force``."""
        qr = self.get_queued(zone, qr_id)
        if qr is None:
            return
        holder = self.get_node(zone, qr.node_id) if qr.node_id else None
        force = holder is None or made_by(holder, qr_id)
        self.queued_calls.delete_queued(zone, qr_id, timeout, force=force)

    def wait_for_queued(
        self,
        zone: str,
        qr_id: str,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 3600,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> QueuedInfo:
        """Poll until ACTIVE. FAILED and SUSPENDED raise :class:`CreateFailed` (see
        :func:`~tpuwizard.core.cloud.tpu.queued.ended_error`: a stockout, :class:`QueueExpired` or
        :class:`QueueSuspended`); a wait that runs out while the request is still queued for
        capacity raises :class:`QueueExpired` too: it is the same wait as the request's
        validUntilDuration."""
        last: QueuedInfo | None = None  # the last state seen before an end

        def read() -> QueuedInfo | None:
            nonlocal last
            qr = self.get_queued(zone, qr_id)
            if qr is not None and qr.state in ("FAILED", "SUSPENDED"):
                raise ended_error(qr, last.state if last else "CREATING", time.time())
            last = qr or last
            return qr

        def failure(_qr: QueuedInfo | None, state: str) -> str | None:
            return "the queued resource is NOT_FOUND" if state == "NOT_FOUND" else None

        try:
            return poll_until(
                f"queued resource {qr_id}",
                read,
                "ACTIVE",
                failure,
                on_state,
                timeout,
                poll,
                cancelled,
            )
        except WaitTimedOut as err:
            if last is None or err.state not in QUEUE_WAITING:
                raise  # CREATING or PROVISIONING all along: not a question of capacity
            raise QueueExpired(qr_id, err.state, err.seconds, err, route_of(last)) from err

    def queued_gone(self, zone: str, qr_id: str) -> bool:
        if self.get_queued(zone, qr_id) is not None:
            return False
        return all(q.name != qr_id for q in self.list_queued(zone))

    # -- what things mean (the Cloud protocol) ---------------------------------------------
    def not_deletable_yet(self, err: BaseException) -> bool:
        """Google refuses a delete for a while right after create ("not in a deletable
        state"); asking again later succeeds."""
        return google_errors.not_deletable_yet(err)

    def bills_in_state(self, kind: str, state: str) -> bool:
        return tpu_states.bills_in_state(kind, state)

    def parts_of(
        self, kind: str, zone: str, name: str, node_id: str | None, accelerator: str | None = None
    ) -> list[Part]:
        """A queued resource takes the node it asked for with it; a node is one resource."""
        return [Part("node", zone, node_id)] if kind == "queued" and node_id else []

    def part_labels(self, part: Part) -> dict[str, str] | None:
        """Only nodes are parts here (read as nodes): no other kind exists."""
        return None

    def part_gone(self, part: Part) -> bool:
        return True

    def deadline_at(self, kind: str, zone: str, name: str) -> float | None:
        """A Flex-start request's ``runDuration.terminationTime`` (the TPU API sets no other
        deadline: a node's is its watchdog's, in the ledger)."""
        if kind != "queued":
            return None
        qr = self.get_queued(zone, name)
        return qr.ends_at if qr is not None else None

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        """The TPU API's numeric ``Node.id`` and its ``createTime``."""
        return NodeIdentity(node.uid, node.create_time)

    def _node_info(self, node: Any, zone: str) -> NodeInfo:
        created = node.create_time.timestamp() if node.create_time else None
        return NodeInfo(
            name=node.name.rsplit("/", 1)[-1],
            zone=zone,
            accelerator_type=node.accelerator_type,
            state=self.tpu_v2.Node.State(node.state).name,
            labels=dict(node.labels),
            create_time=created,
            endpoints=tuple(e.ip_address for e in node.network_endpoints),
            queued_resource=node.queued_resource or None,
            spot=bool(node.scheduling_config.spot or node.scheduling_config.preemptible),
            external_ips=tuple(e.access_config.external_ip for e in node.network_endpoints),
            uid=str(node.id or ""),
        )
