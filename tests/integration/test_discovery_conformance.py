"""Every request body tpuwizard sends and every reply the sandbox gives validates against Google's
discovery documents for the Cloud TPU API v2 and v2alpha1 (shipped by google-api-python-client);
so do the calls gcloud makes beyond those (v1 lists, single reads, guest attributes, nodes.patch,
a create by topology, Compute Engine's projects.get), and every error is Google's JSON shape.

The traffic is recorded at the sandbox's HTTP handler while the real client (and the on-VM
watchdog) does everything tpuwizard asks of the API: list zones, types and versions; create,
read, list and delete nodes; spot, guaranteed and Flex-start queued resources; operations.
"""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest
from tpuwizard_verify import tpu_watchdog

from tests.integration.discovery import document, errors, find_method, record_traffic
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE = "us-central1-a"
FLEX_ZONE = "us-west4-a"  # Flex-start exists there for v5e training (google-behaviour.md:25)
RUN = "20261130-012000-ab12"
TPU_PREFIXES = ("/v2/", "/v2alpha1/")
# Google's system parameters that discovery documents do not list: the generated REST client
# sends "$alt=json;enum-encoding=int" ($alt is an alias of alt).
SYSTEM_PARAMETERS = {"$alt"}


@pytest.fixture
def traffic(monkeypatch):
    return record_traffic(monkeypatch)


def request(node_id, accelerator="v5litepod-4", zone=ZONE, **kw):
    return NodeRequest(
        zone=zone, node_id=node_id, slice=parse_accelerator(accelerator), run_id=RUN, **kw
    )


def everything_tpuwizard_asks(server, cloud):
    cloud.list_zones()
    cloud.accelerator_types(ZONE)
    cloud.runtime_versions(ZONE)
    op = cloud.create_node(
        request(
            "conf-vm", service_account="runner@p.iam.gserviceaccount.com", cloud_platform_scope=True
        )
    )
    cloud.wait_for_node(ZONE, "conf-vm", op, poll=0.05)
    cloud.list_nodes(ZONE)
    cloud.delete_node(ZONE, "conf-vm")
    cloud.node_gone(ZONE, "conf-vm")
    # Autocheckpoint: the node, and a spot queued request, through v2alpha1 (its field is there).
    op = cloud.create_node(request("conf-ac", autocheckpoint=True))
    cloud.wait_for_node(ZONE, "conf-ac", op, poll=0.05)
    cloud.delete_node(ZONE, "conf-ac")
    cloud.create_queued(request("conf-acq", spot=True, autocheckpoint=True), "conf-acq-qr", "spot")
    cloud.wait_for_queued(ZONE, "conf-acq-qr", poll=0.05)
    cloud.delete_queued(ZONE, "conf-acq-qr")
    cloud.create_node(request("conf-internal", external_ips=False))
    cloud.wait_for_node(ZONE, "conf-internal", poll=0.05)
    cloud.delete_node(ZONE, "conf-internal")
    for route, node_id in (("spot", "conf-spot"), ("guaranteed", "conf-g")):
        req = request(node_id, spot=route == "spot", queue_wait_s=600)
        cloud.create_queued(req, f"{node_id}-qr", route)
        cloud.wait_for_queued(ZONE, f"{node_id}-qr", poll=0.05)
        cloud.list_queued(ZONE)
        cloud.delete_queued(ZONE, f"{node_id}-qr")
        cloud.queued_gone(ZONE, f"{node_id}-qr")
    flex = request("conf-flex", accelerator="v5litepod-16", zone=FLEX_ZONE, queue_wait_s=600)
    cloud.create_queued(flex, "conf-flex-qr", "flex", max_run_seconds=3600)
    cloud.wait_for_queued(FLEX_ZONE, "conf-flex-qr", poll=0.05)
    cloud.delete_queued(FLEX_ZONE, "conf-flex-qr")
    # The watchdog: its DELETE and the reads until the node is gone.
    cloud.wait_for_node(ZONE, "conf-wd", cloud.create_node(request("conf-wd")), poll=0.05)
    tpu_watchdog.main(
        [
            "--resource", cloud.node_path(ZONE, "conf-wd"),
            "--deadline", str(time.time()),
            "--endpoint", server.endpoint,
            "--iam-endpoint", server.endpoint,
            "--token", "none",
            "--retry", "0.1",
        ]
    )  # fmt: skip


def which_document(path: str) -> str | None:
    """The discovery document a path belongs to; None: another API (Resource Manager's /v1/)."""
    if path.startswith("/compute/v1/"):
        return "compute"
    if path.startswith("/v1/projects/") and "/locations" in path:
        return "v1"
    return path.split("/")[1] if path.startswith(TPU_PREFIXES) else None


def problems_in(traffic, checked: set[str]) -> list[str]:
    """What in the recorded traffic breaks Google's discovery documents; ``checked`` gains each
    method seen, as "ID VERSION"."""
    docs = {
        "v1": document("v1"),
        "v2": document("v2"),
        "v2alpha1": document("v2alpha1"),
        "compute": document("v1", api="compute"),
    }
    problems: list[str] = []
    for method, path, query, body, status, reply in traffic:
        key = which_document(path)
        if key is None:
            continue  # the watchdog's testIamPermissions is Resource Manager's, not this API
        doc = docs[key]
        found = find_method(doc, method, path)
        if found is None:
            problems.append(f"{method} {path}: no such method in the discovery document")
            continue
        checked.add(f"{found.id} {key}")
        where = f"{method} {path}"
        problems += [
            f"{where}: query parameter '{k}' is not Google's"
            for k in query
            if k not in found.parameters | SYSTEM_PARAMETERS
        ]
        if found.request:
            problems += [f"{where} request {e}" for e in errors(doc, {"$ref": found.request}, body)]
        elif body:
            problems.append(f"{where}: sent a body to a method that takes none")
        if status == 200 and found.response:
            problems += [f"{where} reply {e}" for e in errors(doc, {"$ref": found.response}, reply)]
        elif status != 200:
            status_body = {k: v for k, v in reply["error"].items() if k != "status"}
            problems += [f"{where} error {e}" for e in errors(doc, {"$ref": "Status"}, status_body)]
    return problems


def test_every_body_sent_and_every_reply_matches_googles_discovery_documents(sandbox, traffic):
    server, cloud = sandbox(delay=0)
    everything_tpuwizard_asks(server, cloud)
    checked: set[str] = set()
    problems = problems_in(traffic, checked)
    assert not problems, "\n".join(problems)
    # The calls that matter were all seen, in both versions where tpuwizard uses both.
    for expected in (
        "tpu.projects.locations.list v2",
        "tpu.projects.locations.acceleratorTypes.list v2",
        "tpu.projects.locations.runtimeVersions.list v2",
        "tpu.projects.locations.nodes.create v2",
        "tpu.projects.locations.nodes.get v2",
        "tpu.projects.locations.nodes.list v2",
        "tpu.projects.locations.nodes.delete v2",
        "tpu.projects.locations.operations.get v2",
        "tpu.projects.locations.queuedResources.create v2",
        "tpu.projects.locations.queuedResources.delete v2",
        "tpu.projects.locations.queuedResources.create v2alpha1",
        "tpu.projects.locations.queuedResources.get v2alpha1",
    ):
        assert expected in checked, (expected, sorted(checked))


def test_the_validator_rejects_what_google_would_not_accept():
    doc = document("v2")
    node = {"$ref": "Node"}
    assert (
        errors(
            doc,
            node,
            {"acceleratorType": "v5litepod-4", "networkConfig": {"enableExternalIps": True}},
        )
        == []
    )
    assert errors(doc, node, {"acceleratorType": "v5litepod-4", "zone": "x"})  # not a Node field
    assert errors(doc, node, {"networkConfig": {"enableExternalIps": "yes"}})  # not a boolean
    assert errors(doc, node, {"state": "RUNNING"})  # not in the enum
    assert errors(doc, node, {"id": 7})  # int64 travels as a string
    queued = {"$ref": "QueuedResource"}
    assert errors(doc, queued, {"queueingPolicy": {"validUntilDuration": "600"}})  # needs 's'
    assert errors(doc, queued, {"provisioningModel": "FLEX_START"})  # v2alpha1 only
    assert errors(document("v2alpha1"), queued, {"provisioningModel": "FLEX_START"}) == []


def call(server, method: str, path: str, body: dict | None = None) -> tuple[int, str, dict]:
    """One raw request as gcloud's HTTP client makes it: (status, content type, JSON reply)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    connection.request(method, path, body=data, headers=headers)
    answer = connection.getresponse()
    reply = (answer.status, answer.getheader("Content-Type", ""), json.loads(answer.read()))
    connection.close()
    return reply


def done(server, operation: dict) -> dict:
    version = operation["metadata"]["apiVersion"]
    for _ in range(200):
        if operation.get("done"):
            return operation
        time.sleep(0.05)
        operation = call(server, "GET", f"/{version}/{operation['name']}")[2]
    raise AssertionError(f"operation {operation['name']} is not done")


def everything_gcloud_asks_beyond(server) -> None:
    parent = f"/projects/p/locations/{ZONE}"
    call(server, "GET", f"/v2{parent}/acceleratorTypes/v5litepod-4")
    call(server, "GET", f"/v2{parent}/runtimeVersions/v2-alpha-tpuv5-lite")
    call(server, "GET", f"/v2{parent}/acceleratorTypes/v9-8")  # 404
    call(server, "GET", "/v1/projects/p/locations")
    call(server, "GET", f"/v1{parent}/acceleratorTypes")
    node = {
        "acceleratorConfig": {"type": "V5LITE_POD", "topology": "2x2"},
        "runtimeVersion": "v2-alpha-tpuv5-lite",
        "networkConfig": {"enableExternalIps": True},
    }
    done(server, call(server, "POST", f"/v2alpha1{parent}/nodes?nodeId=by-shape", node)[2])
    asked = {"queryPath": "", "workerIds": [""]}
    call(server, "POST", f"/v2{parent}/nodes/by-shape:getGuestAttributes", asked)
    keys = {"metadata": {"ssh-keys": "\nme:ssh-ed25519 AAAAC3Nza me"}}
    done(server, call(server, "PATCH", f"/v2{parent}/nodes/by-shape?updateMask=metadata", keys)[2])
    call(server, "PATCH", f"/v2{parent}/nodes/by-shape?updateMask=acceleratorType", node)  # 400
    call(server, "GET", "/compute/v1/projects/p")


def test_what_gcloud_asks_beyond_tpuwizard_matches_googles_discovery_documents(sandbox, traffic):
    server, _ = sandbox(delay=0)
    everything_gcloud_asks_beyond(server)
    checked: set[str] = set()
    problems = problems_in(traffic, checked)
    assert not problems, "\n".join(problems)
    for expected in (
        "tpu.projects.locations.acceleratorTypes.get v2",
        "tpu.projects.locations.runtimeVersions.get v2",
        "tpu.projects.locations.list v1",
        "tpu.projects.locations.acceleratorTypes.list v1",
        "tpu.projects.locations.nodes.create v2alpha1",
        "tpu.projects.locations.operations.get v2alpha1",
        "tpu.projects.locations.nodes.getGuestAttributes v2",
        "tpu.projects.locations.nodes.patch v2",
        "tpu.projects.locations.operations.get v2",
        "compute.projects.get compute",
    ):
        assert expected in checked, (expected, sorted(checked))
    statuses = [status for _, _, _, _, status, _ in traffic]
    assert statuses.count(404) == 1 and statuses.count(400) == 1  # the errors were answered


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"PUT /v2/projects/p/locations/us-central1-a/nodes/n HTTP/1.1\r\nHost: x\r\n\r\n",
        b"OPTIONS /v2/projects/p/locations HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v2/projects/p/locations/us-central1-a/nodes/n:stop HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v2/projects p HTTP/1.1\r\n\r\n",  # not a request line
    ],
)
def test_an_unsupported_method_or_request_gets_googles_json_error_never_html(
    sandbox, request_bytes
):
    server, _ = sandbox(delay=0)
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as s:
        s.sendall(request_bytes)
        answer = http.client.HTTPResponse(s)
        answer.begin()
        content_type, raw = answer.getheader("Content-Type", ""), answer.read()
    assert content_type.startswith("application/json"), raw
    reply = json.loads(raw)
    error = reply["error"]
    assert set(reply) == {"error"} and error["code"] == answer.status >= 400
    assert error["status"] in ("UNIMPLEMENTED", "NOT_FOUND", "INVALID_ARGUMENT")
    status_body = {k: v for k, v in error.items() if k != "status"}
    assert errors(document("v2"), {"$ref": "Status"}, status_body) == []
