"""ComputeCloud without a server: where it sends its calls (never Google's default endpoint in
practice), what it reads out of an instance, and that it keeps the Cloud protocol's shape."""

from __future__ import annotations

import ast
import inspect
import json

import pytest

from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.cloud.compute import (
    client as compute,
)
from tpuwizard.core.cloud.compute import (
    operation_wait as compute_operation_wait,
)
from tpuwizard.core.cloud.compute import (
    read as compute_read,
)
from tpuwizard.core.cloud.compute import (
    resize as compute_resize,
)
from tpuwizard.core.cloud.compute import (
    slices as compute_slices,
)
from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.endpoint import compute_endpoint
from tpuwizard.core.cloud.protocol import Cloud

SANDBOX = "http://127.0.0.1:8470"


@pytest.fixture
def clean(monkeypatch):
    for key in ("TPUWIZARD_COMPUTE_ENDPOINT", "TPUWIZARD_TPU_ENDPOINT", "TPUWIZARD_SANDBOX_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_the_endpoint_is_its_own_variable_then_the_tpu_one_then_google_s(clean):
    assert compute_endpoint() == "https://compute.googleapis.com"
    clean.setenv("TPUWIZARD_TPU_ENDPOINT", SANDBOX)
    assert compute_endpoint() == SANDBOX  # the sandbox serves both APIs on one port
    clean.setenv("TPUWIZARD_COMPUTE_ENDPOINT", "http://127.0.0.1:9999/compute/v1/")
    assert compute_endpoint() == "http://127.0.0.1:9999"  # gcloud's form: the client adds it
    assert compute_endpoint("http://127.0.0.1:1") == "http://127.0.0.1:1"


def test_every_client_and_the_operations_one_use_that_endpoint(clean):
    cloud = ComputeCloud("p", endpoint=SANDBOX)
    assert cloud.backend == COMPUTE and not any(map(cloud.queues, ("vm", "spot", "flex")))
    slices = cloud.slices
    for client in (cloud.instances, cloud.operations, slices.migs, slices.zone_operations):
        assert client.api_endpoint == SANDBOX
    assert cloud.reads.base == f"{SANDBOX}/compute/v1/projects/p"  # the reads' own REST calls
    # Not Google's credentials for a local endpoint.
    assert type(cloud.credentials).__name__ == "AnonymousCredentials"


@pytest.mark.parametrize("module", [compute, compute_slices, compute_resize])
def test_no_extended_operation_is_ever_waited_on(module):
    # insert()/delete() return extended operations whose .result() polls Google's default
    # endpoint (compute-engine.md, "The Python client"): only the *_unary calls are used.
    tree = ast.parse(inspect.getsource(module))
    # Every method named on a client (compute_slices passes them to one caller), but not the
    # slices part's own (ComputeCloud.delete_node calls self.slices.delete).
    named = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) != "self.slices"
    }
    assert {"insert_unary", "delete_unary"} <= named
    assert not named & {"insert", "delete", "resize", "result", "done"}
    # zoneOperations.wait is a plain REST call on our own operations client (its endpoint ours).
    waits = [
        ast.unparse(node.func.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "wait"
    ]
    # Our own operations clients (zonal, and the slices' regional one), on our endpoint: the
    # slices' and Route 2B's through compute_operation_wait, given the client.
    assert (
        waits
        == {
            compute: ["self.slices", "self.operations"],
            compute_slices: [],
            compute_resize: [],
        }[module]
    )
    wait_tree = ast.parse(inspect.getsource(compute_operation_wait))
    assert "client.wait(" in ast.unparse(wait_tree)


def test_the_protocol_s_members_with_its_parameters():
    members = [n for n, v in vars(Cloud).items() if callable(v) and not n.startswith("_")]
    for name in members:
        ours = inspect.signature(getattr(ComputeCloud, name)).parameters
        theirs = inspect.signature(getattr(Cloud, name)).parameters
        assert [(p.name, p.kind, p.default) for p in ours.values()] == [
            (p.name, p.kind, p.default) for p in theirs.values()
        ], name


INSTANCE = {
    "id": "8123456789012345678",
    "name": "tpu-a",
    "zone": "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a",
    "machineType": "https://www.googleapis.com/compute/v1/projects/p/zones/us-east5-a/"
    "machineTypes/ct6e-standard-4t",
    "status": "RUNNING",
    "creationTimestamp": "2026-12-01T10:00:00.000-08:00",
    "labels": {"managed-by": "tpuwizard", "tpuwizard-run": "r1"},
    "networkInterfaces": [
        {
            "networkIP": "10.0.0.5",
            "accessConfigs": [{"type": "ONE_TO_ONE_NAT", "natIP": "34.1.2.3"}],
        }
    ],
    "scheduling": {"provisioningModel": "SPOT"},
    "resourceStatus": {"scheduling": {"terminationTimestamp": "2026-12-01T11:00:00.000-08:00"}},
}


def test_an_instance_reads_as_a_node():
    from google.cloud import compute_v1

    node = compute_read.node_info(compute_v1.Instance.from_json(json.dumps(INSTANCE)), "elsewhere")
    assert (node.name, node.zone, node.accelerator_type, node.state) == (
        "tpu-a",
        "us-east5-a",
        "v6e-4",
        "RUNNING",
    )
    assert node.endpoints == ("10.0.0.5",) and node.addresses == ("34.1.2.3",)
    assert node.spot and node.uid == "8123456789012345678"
    assert node.create_time == 1796148000.0  # 18:00 UTC
    internal = dict(INSTANCE, networkInterfaces=[{"networkIP": "10.0.0.6"}], scheduling={})
    node = compute_read.node_info(compute_v1.Instance.from_json(json.dumps(internal)), "z")
    assert node.external_ips == ("",) and node.internal_only == (0,) and not node.spot


def test_the_deadline_is_read_back_from_the_instance(clean):
    from google.cloud import compute_v1

    cloud = ComputeCloud("p", endpoint=SANDBOX)
    cloud._get_raw = lambda zone, name: compute_v1.Instance.from_json(json.dumps(INSTANCE))  # type: ignore[method-assign]
    assert cloud.deadline_at("node", "us-east5-a", "tpu-a") == 1796148000.0 + 3600
    stopped = dict(INSTANCE, resourceStatus={})  # Google clears it when a VM stops
    cloud._get_raw = lambda zone, name: compute_v1.Instance.from_json(json.dumps(stopped))  # type: ignore[method-assign]
    assert cloud.deadline_at("node", "us-east5-a", "tpu-a") is None


def test_the_label_filter_is_compute_s_syntax():
    assert compute_read.label_filter({"managed-by": "tpuwizard", "a": "b"}) == (
        '(labels.a = "b") (labels.managed-by = "tpuwizard")'
    )
    assert compute_read.label_filter(None) == ""


def test_importing_the_module_loads_no_google_client():
    import subprocess
    import sys

    code = (
        "import sys, tpuwizard.core.cloud.compute.client, tpuwizard.core.cloud.diagnose.failure\n"
        "print(sorted(m for m in sys.modules if m.startswith('google.cloud')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
