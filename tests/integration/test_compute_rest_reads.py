"""Compute Engine's reads as plain REST calls (compute/rest.py) against the sandbox and Google's
own client on the same server: the same nodes out of the same resources, every request a method
of compute.v1.json with Google's parameters, google-cloud-compute never imported by a survey,
and every refusal (401, 403, 404, 429, 5xx, a connection refused) the same exception, so the same
diagnosis, as the client's."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.integration.discovery import document, record_traffic
from tests.integration.sshd import free_port
from tests.integration.test_compute_cloud import PROJECT, ZONE, launched, request
from tests.integration.test_compute_conformance import problems_in
from tpuwizard.core.cloud.compute import read as compute_read
from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.compute.slice_reads import slice_info
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.types import MANAGED_BY
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import STOP_POLL_S, start_in_thread


@pytest.fixture
def sandbox_cloud(tmp_path):
    server = make_server(tmp_path / "sandbox", delay=0.05)
    start_in_thread(server)
    yield ComputeCloud(PROJECT, endpoint=server.endpoint, retry_deadline=5)
    server.shutdown()
    server.server_close()


def test_the_reads_give_the_client_s_nodes_and_are_google_s_methods(sandbox_cloud, monkeypatch):
    cloud = sandbox_cloud
    launched(cloud, request("spot", name="tpu-a"))
    launched(cloud, request("flex", name="tpu-b", max_run_s=7200))
    traffic = record_traffic(monkeypatch)
    reads, client = cloud.reads, cloud.instances
    for name in ("tpu-a", "tpu-b"):
        ours = reads.instance(ZONE, name)
        theirs = client.get(project=PROJECT, zone=ZONE, instance=name, timeout=30)
        assert compute_read.node_info(ours, ZONE) == compute_read.node_info(theirs, ZONE)
        stamp = ours.resource_status.scheduling.termination_timestamp
        assert stamp and stamp == theirs.resource_status.scheduling.termination_timestamp
    assert reads.instance(ZONE, "nowhere") is None
    listed = [n.name for n in cloud.list_nodes(ZONE, MANAGED_BY)]
    assert listed == ["tpu-a", "tpu-b"]
    assert sorted(n.name for n in cloud.list_all_nodes(MANAGED_BY)) == ["tpu-a", "tpu-b"]
    assert ZONE in cloud.list_zones() and "v6e-4" in cloud.accelerator_types(ZONE)
    assert cloud.get_node(ZONE, "tpu-a").spot and not cloud.get_node(ZONE, "tpu-b").spot
    ours_only = [call for call in traffic if call[1].startswith("/compute/v1/")]
    problems, checked = problems_in(ours_only, document("v1", api="compute"))
    assert not problems, "\n".join(problems)
    assert {
        "compute.instances.get",
        "compute.instances.list",
        "compute.instances.aggregatedList",
        "compute.instanceGroupManagers.list",
        "compute.regionInstanceTemplates.list",
        "compute.resourcePolicies.list",
        "compute.machineTypes.list",
    } <= checked


def test_a_slice_s_parts_read_as_the_client_reads_them(sandbox_cloud):
    from tests.unit.test_compute_slices import request as slice_request

    cloud = sandbox_cloud
    req = dataclasses.replace(slice_request(), zone=ZONE, node_id="tpuwizard-s1")
    build = cloud.create_node(req)
    cloud.wait_for_node(ZONE, "tpuwizard-s1", build, None, timeout=120, poll=0.05)
    s, region = cloud.slices, ZONE.rsplit("-", 1)[0]
    mig = s.migs.get(project=PROJECT, zone=ZONE, instance_group_manager="tpuwizard-s1")
    template = s.templates.get(project=PROJECT, region=region, instance_template="tpuwizard-s1-it")
    policy = s.policies.get(project=PROJECT, region=region, resource_policy="tpuwizard-s1-wp")
    vms = sorted(
        (v for v in cloud.instances.list(project=PROJECT, zone=ZONE) if "-s1-" in v.name),
        key=lambda v: v.name,
    )
    theirs = slice_info(ZONE, "tpuwizard-s1", mig, template, policy, vms)
    assert theirs.state == "RUNNING" and len(theirs.endpoints) == 4
    assert cloud.get_node(ZONE, "tpuwizard-s1") == theirs
    assert [n for n in cloud.list_nodes(ZONE, MANAGED_BY) if n.name == "tpuwizard-s1"] == [theirs]
    cloud.delete_node(ZONE, "tpuwizard-s1")
    assert cloud.node_gone(ZONE, "tpuwizard-s1")


SURVEY = """
import sys
from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.types import MANAGED_BY
cloud = ComputeCloud("practice-project", endpoint=sys.argv[1])
zones = cloud.list_zones()
cloud.list_nodes(zones[0], MANAGED_BY), cloud.get_node(zones[0], "tpu-x")
cloud.node_gone(zones[0], "tpu-x"), cloud.list_all_nodes(MANAGED_BY)
print("google.cloud.compute_v1" in sys.modules)
"""


def test_a_survey_never_imports_google_cloud_compute(sandbox_cloud):
    # Its import alone took 3.35 s: the leftover check and status pay nothing for it.
    endpoint = sandbox_cloud.endpoint
    out = subprocess.run(
        [sys.executable, "-c", SURVEY, endpoint], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


class Refusing(BaseHTTPRequestHandler):
    """Answers every GET with the status its path names (/compute/v1/.../zones/<code>/...)."""

    def do_GET(self) -> None:
        code = int(self.path.split("/zones/")[1].split("/")[0])
        body = {
            "error": {
                "code": code,
                "message": f"refused with {code}",
                "errors": [{"message": f"refused with {code}", "domain": "global", "reason": "x"}],
            }
        }
        raw = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def refusing():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    serving = {"poll_interval": STOP_POLL_S}  # its shutdown() waits that long, not 0.5 s
    threading.Thread(target=server.serve_forever, kwargs=serving, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def failure(call):
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("no refusal")


@pytest.mark.parametrize("code", [401, 403, 429, 500, 503])
def test_a_refusal_is_the_client_s_exception_and_diagnosis(refusing, code):
    cloud = ComputeCloud(PROJECT, endpoint=refusing, retry_deadline=0.3)
    zone = str(code)
    ours = failure(lambda: cloud.reads.instance(zone, "tpu-a"))
    theirs = failure(
        lambda: cloud.instances.get(
            project=PROJECT, zone=zone, instance="tpu-a", retry=cloud.retry, timeout=5
        )
    )
    assert type(ours) is type(theirs) and str(ours) == str(theirs)
    context = Context(project=PROJECT, zone=zone, backend="compute")
    assert diagnose(ours, context) == diagnose(theirs, context)


def test_a_refused_connection_is_the_client_s_exception_and_diagnosis():
    port = free_port()  # nothing listens there
    cloud = ComputeCloud(PROJECT, endpoint=f"http://127.0.0.1:{port}", retry_deadline=0.3)
    ours = failure(lambda: cloud.list_nodes(ZONE))
    theirs = failure(lambda: cloud.instances.get(project=PROJECT, zone=ZONE, instance="x"))
    assert type(ours) is type(theirs)
    context = Context(project=PROJECT, zone=ZONE, backend="compute")
    assert diagnose(ours, context).kind == diagnose(theirs, context).kind
