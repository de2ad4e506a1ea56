"""Every request body tpuwizard sends and every reply the sandbox gives validates against Google's
discovery documents for the Cloud TPU API v2 and v2alpha1 (shipped by google-api-python-client).

The traffic is recorded at the sandbox's HTTP handler while the real client (and the on-VM
watchdog) does everything tpuwizard asks of the API: list zones, types and versions; create,
read, list and delete nodes; spot, guaranteed and Flex-start queued resources; operations.
"""

from __future__ import annotations

import time

import pytest
from tpuwizard_verify import tpu_watchdog

from tests.integration.discovery import document, errors, find_method, record_traffic
from tpuwizard.core.cloud.types import NodeRequest

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
    return NodeRequest(zone=zone, node_id=node_id, accelerator_type=accelerator, run_id=RUN, **kw)


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


def test_every_body_sent_and_every_reply_matches_googles_discovery_documents(sandbox, traffic):
    server, cloud = sandbox(delay=0)
    everything_tpuwizard_asks(server, cloud)
    docs = {"v2": document("v2"), "v2alpha1": document("v2alpha1")}
    problems: list[str] = []
    checked = set()
    for method, path, query, body, status, reply in traffic:
        if not path.startswith(TPU_PREFIXES):
            continue  # the watchdog's testIamPermissions is Resource Manager's, not this API
        doc = docs[path.split("/")[1]]
        found = find_method(doc, method, path)
        if found is None:
            problems.append(f"{method} {path}: no such method in the discovery document")
            continue
        checked.add(found.id + " " + path.split("/")[1])
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
