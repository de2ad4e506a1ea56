"""Queued resources (spot, guaranteed, Flex-start): the calls a :class:`TpuCloud` makes to ask for
a node through a queue, and to read and delete such requests. TpuCloud holds one and waits on it.

Spot and guaranteed go through the v2 client; Flex-start, which the Python package does not know,
through the v2alpha1 REST API with google-auth's ``AuthorizedSession``. The bodies follow gcloud
(reference/google-behaviour.md, Creating): a spot request sets only ``spot {}`` (never the node's
``schedulingConfig``), and spot and Flex-start requests carry ``queueingPolicy.
validUntilDuration`` so that Google fails a request nobody waits for any more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud import google_errors as ge
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo, queued_info
from tpuwizard.core.errors import CreateFailed, QueueExpired, QueueSuspended
from tpuwizard.core.routes import Route

# The states of a request still waiting for capacity ("It will remain in this state until there
# are sufficient free resources", v2 discovery document, WAITING_FOR_RESOURCES).
QUEUE_WAITING = ("ACCEPTED", "WAITING_FOR_RESOURCES")
# Words of a FAILED reason that name the request's timing constraint rather than the request.
_EXPIRY_WORDS = ("validuntil", "valid until", "queueing policy", "timing constraint")


def failed_error(qr: QueuedInfo) -> Exception:
    """A FAILED request's ``state.failedData.error`` as the api_core exception the same error
    raises on a create (code 8 -> ResourceExhausted, ...), so it is diagnosed alike."""
    from google.api_core import exceptions

    error = qr.error or {}
    code, message = error.get("code"), str(error.get("message") or "")
    if isinstance(code, int) and code:
        return exceptions.from_grpc_status(code, message or f"the queued resource {qr.name} failed")
    return RuntimeError(f"the queued resource is FAILED{': ' + message if message else ''}")


def made_by(node: NodeInfo, qr_id: str) -> bool:
    """Did the queued request ``qr_id`` make ``node``? Its ``queuedResource`` names "the
    QueuedResource that requested this Node" (Node, tpu.v2.json); a node of the same name made
    otherwise names none, or another."""
    requester = node.queued_resource or ""
    return bool(requester) and requester.rsplit("/", 1)[-1] == qr_id


def route_of(qr: QueuedInfo) -> str | None:
    return "spot" if qr.spot else "flex" if qr.flex else None


def ended_error(qr: QueuedInfo, last_state: str, now: float) -> CreateFailed:
    """Why a queued request ended without its node, told apart by what Google says.

    FAILED with a capacity reason (code 8, "no more capacity", a spot refusal) is a stockout as on
    a create. FAILED past its ``validUntilDuration`` is the same lack of capacity seen from the
    queue: Google's FAILED covers "unavailability of resources within the constraints of the
    request (e.g., the 'valid until' start timing constraint expired)" (v2 discovery document);
    it is recognised by DEADLINE_EXCEEDED (code 4), by words naming the constraint, or by the
    request's own age, since Google publishes no exact text for it. SUSPENDED: its VMs deleted.
    """
    route = route_of(qr)
    if qr.state == "SUSPENDED":
        return QueueSuspended(qr.name, qr.initiator, route)
    error = failed_error(qr)
    if ge.capacity_refusal(error, route == Route.SPOT) is None and _expired(qr, now):
        waited = now - qr.create_time if qr.create_time else qr.valid_until_s
        return QueueExpired(qr.name, last_state, waited, error, route)
    return CreateFailed(error, route=route)


def _expired(qr: QueuedInfo, now: float) -> bool:
    error = qr.error or {}
    message = str(error.get("message") or "").lower()
    if error.get("code") == 4 or any(w in message for w in _EXPIRY_WORDS):
        return True
    if qr.valid_until_s is None or qr.create_time is None:
        return False
    return now >= qr.create_time + qr.valid_until_s


def alpha_node_body(req: NodeRequest, queued: bool = True) -> dict[str, Any]:
    """The node a request asks for, as v2alpha1's JSON: the fields the v2 client sends, and
    ``autocheckpointEnabled``, which only v2alpha1 has (the TPU v2alpha1 discovery document's
    Node; Google's Autocheckpoint page, Preview)."""
    node: dict[str, Any] = {
        "acceleratorType": req.accelerator_type,
        "runtimeVersion": req.runtime,
        "labels": req.labels,
        "metadata": req.metadata,
        "networkConfig": {"enableExternalIps": req.external_ips},
    }
    if req.spot and not queued:  # a spot queued resource says so with spot {} alone
        node["schedulingConfig"] = {"spot": True}
    if req.service_account_body is not None:
        node["serviceAccount"] = req.service_account_body
    if req.autocheckpoint:
        node["autocheckpointEnabled"] = True
    return node


class AlphaOperation:
    """A v2alpha1 create's long-running operation, read as the v2 client's operation is read
    (``done``, ``exception``) by :meth:`TpuCloud.wait_for_node`."""

    def __init__(self, calls: QueuedCalls, url: str) -> None:
        self.calls, self.url = calls, url
        self._last: dict[str, Any] = {}

    def done(self, retry: Any = None) -> bool:
        if not self._last.get("done"):
            self._last = self.calls._read("GET", self.url)
        return bool(self._last.get("done"))

    def exception(self) -> Exception | None:
        from google.api_core import exceptions

        error = self._last.get("error")
        if not error:
            return None
        return exceptions.from_grpc_status(int(error.get("code", 2)), error.get("message", ""))


class QueuedCalls:
    """The TPU API's queued-resource calls, over the v2 client and the v2alpha1 REST API."""

    def __init__(
        self,
        client: Any,
        tpu_v2: Any,
        endpoint: str,
        credentials: Any,
        timeout: float,
        retry: Any,
        parent: Callable[[str], str],
        node_proto: Callable[[NodeRequest, bool], Any],
    ) -> None:
        self.client, self.tpu_v2 = client, tpu_v2
        self.endpoint, self.credentials = endpoint, credentials
        self.timeout, self.retry = timeout, retry
        self.parent = parent  # projects/P/locations/Z
        self.node_proto = node_proto  # the node a request asks for, as the v2 client takes it

    def queued_path(self, zone: str, qr_id: str) -> str:
        return f"{self.parent(zone)}/queuedResources/{qr_id}"

    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        """Request a node through a queued resource: ``spot``, ``guaranteed`` or ``flex``.

        Follow it with :meth:`wait_for_queued`; the request's own operation finishes at once.
        """
        if route == Route.FLEX:
            if not max_run_seconds:
                raise ValueError("Flex-start needs a maximum run duration")
            self._create_flex(req, qr_id, max_run_seconds)
            return
        if req.autocheckpoint:  # a field only v2alpha1 has: the request goes there
            body = self._alpha_queued_body(req)
            body["spot" if route == "spot" else "guaranteed"] = {}
            self._post_queued(req, qr_id, body)
            return
        tpu = self.tpu_v2
        spec = tpu.QueuedResource.Tpu.NodeSpec(
            parent=self.parent(req.zone),
            node_id=req.node_id,
            node=self.node_proto(req, True),
        )
        qr = tpu.QueuedResource(tpu=tpu.QueuedResource.Tpu(node_spec=[spec]))
        if route == Route.SPOT:
            qr.spot = tpu.QueuedResource.Spot()
        else:
            qr.guaranteed = tpu.QueuedResource.Guaranteed()
        if req.queue_wait_s:
            from google.protobuf import duration_pb2

            qr.queueing_policy = tpu.QueuedResource.QueueingPolicy(
                valid_until_duration=duration_pb2.Duration(seconds=int(req.queue_wait_s))
            )
        self.client.create_queued_resource(
            parent=self.parent(req.zone),
            queued_resource_id=qr_id,
            queued_resource=qr,
            timeout=self.timeout,
        )

    def _create_flex(self, req: NodeRequest, qr_id: str, max_run_seconds: int) -> dict[str, Any]:
        body = self._alpha_queued_body(req)
        body["provisioningModel"] = "FLEX_START"
        body["runDuration"] = {"maxRunDuration": f"{int(max_run_seconds)}s"}
        return self._post_queued(req, qr_id, body)

    def _alpha_queued_body(self, req: NodeRequest) -> dict[str, Any]:
        spec = {
            "parent": self.parent(req.zone),
            "nodeId": req.node_id,
            "node": alpha_node_body(req),
        }
        body: dict[str, Any] = {"tpu": {"nodeSpec": [spec]}}
        if req.queue_wait_s:
            body["queueingPolicy"] = {"validUntilDuration": f"{int(req.queue_wait_s)}s"}
        return body

    def _post_queued(self, req: NodeRequest, qr_id: str, body: dict[str, Any]) -> dict[str, Any]:
        url = (
            f"{self.endpoint}/v2alpha1/{self.parent(req.zone)}/queuedResources"
            f"?queuedResourceId={qr_id}"
        )
        return self._alpha("POST", url, body)

    def _alpha(self, method: str, url: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One v2alpha1 REST call; errors become the same api_core exceptions as the client's."""
        from google.api_core import exceptions
        from google.auth.transport.requests import AuthorizedSession

        session = AuthorizedSession(self.credentials)
        response = session.request(method, url, json=body, timeout=self.timeout)
        if response.status_code >= 400:
            raise exceptions.from_http_response(response)
        return response.json()

    def _read(self, method: str, url: str) -> dict[str, Any]:
        """A read, retried on 429/503 with the same backoff as the client's node reads: one
        transient answer must not abort a launch whose request exists, nor ``status``."""
        read: Callable[[str, str], dict[str, Any]] = self.retry(self._alpha)
        return read(method, url)

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        from google.api_core import exceptions

        try:
            data = self._read("GET", f"{self.endpoint}/v2alpha1/{self.queued_path(zone, qr_id)}")
        except exceptions.NotFound:
            return None
        return queued_info(data, zone)

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        out, token = [], ""
        while True:
            url = f"{self.endpoint}/v2alpha1/{self.parent(zone)}/queuedResources"
            data = self._read("GET", url + (f"?pageToken={token}" if token else ""))
            out += [queued_info(q, zone) for q in data.get("queuedResources", [])]
            token = data.get("nextPageToken", "")
            if not token:
                return out

    def delete_queued(
        self, zone: str, qr_id: str, timeout: float = 600, force: bool = True
    ) -> None:
        """Delete and wait; already gone is fine. With ``force`` the request's own nodes go
        first ("all running nodes belonging to this queued resource", the delete's ``force``);
        without it Google deletes a request whose nodes are gone, or that is ACCEPTED, FAILED
        or SUSPENDED, and refuses any other."""
        from google.api_core import exceptions

        request = self.tpu_v2.DeleteQueuedResourceRequest(
            name=self.queued_path(zone, qr_id), force=force
        )
        try:
            op = self.client.delete_queued_resource(
                request=request, retry=self.retry, timeout=self.timeout
            )
        except exceptions.NotFound:
            return
        op.result(timeout=timeout, retry=self.retry)
