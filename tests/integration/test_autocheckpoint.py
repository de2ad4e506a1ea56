"""Autocheckpoint (issue 47 item 5): a node asked with it is created through v2alpha1 with
``autocheckpointEnabled``; the sandbox, as Google's v2 would, refuses that field on v2."""

from __future__ import annotations

import pytest
import requests

from tests.integration.test_cloud_sandbox import ZONE, request
from tpuwizard.core.cloud.tpu.queued import alpha_node_body

NODES = f"projects/practice-project/locations/{ZONE}/nodes"


def test_the_v2alpha1_node_body_carries_autocheckpoint_only_when_asked() -> None:
    asked = alpha_node_body(request(autocheckpoint=True), queued=False)
    assert asked["autocheckpointEnabled"] is True
    assert asked["acceleratorType"] == "v5litepod-4"
    assert asked["networkConfig"] == {"enableExternalIps": True}
    assert "autocheckpointEnabled" not in alpha_node_body(request(), queued=False)


def test_a_node_with_autocheckpoint_is_made_through_v2alpha1_and_becomes_ready(sandbox) -> None:
    server, cloud = sandbox()
    op = cloud.create_node(request("tpu-ac", autocheckpoint=True))
    node = cloud.wait_for_node(ZONE, "tpu-ac", op, poll=0.05)
    assert node.state == "READY"
    stored = server.state.data["nodes"][f"{NODES}/tpu-ac"]
    assert stored["autocheckpointEnabled"] is True
    cloud.delete_node(ZONE, "tpu-ac")
    assert cloud.node_gone(ZONE, "tpu-ac")


def test_a_spot_queued_request_with_autocheckpoint_goes_through_v2alpha1(sandbox) -> None:
    server, cloud = sandbox()
    cloud.create_queued(request("spot-ac", spot=True, autocheckpoint=True), "spot-ac-qr", "spot")
    stored = server.state.data["queued"][
        f"projects/practice-project/locations/{ZONE}/queuedResources/spot-ac-qr"
    ]
    assert "spot" in stored
    assert stored["tpu"]["nodeSpec"][0]["node"]["autocheckpointEnabled"] is True


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "nodes?nodeId=tpu-v2",
            {"acceleratorType": "v5litepod-1", "runtimeVersion": "v2-alpha-tpuv5-lite"},
        ),
        (
            "queuedResources?queuedResourceId=tpu-v2-qr",
            {
                "tpu": {
                    "nodeSpec": [
                        {
                            "parent": f"projects/practice-project/locations/{ZONE}",
                            "nodeId": "tpu-v2",
                            "node": {
                                "acceleratorType": "v5litepod-1",
                                "runtimeVersion": "v2-alpha-tpuv5-lite",
                            },
                        }
                    ]
                },
                "guaranteed": {},
            },
        ),
    ],
)
def test_the_sandbox_refuses_autocheckpoint_on_v2_as_an_unknown_field(sandbox, path, body):
    server, cloud = sandbox()
    node = body["tpu"]["nodeSpec"][0]["node"] if "tpu" in body else body
    node["autocheckpointEnabled"] = True
    parent = f"projects/practice-project/locations/{ZONE}"
    answer = requests.post(f"{cloud.endpoint}/v2/{parent}/{path}", json=body, timeout=30)
    assert answer.status_code == 400
    assert 'Unknown name "autocheckpointEnabled"' in answer.json()["error"]["message"]
    assert not server.state.data["nodes"] and not server.state.data["queued"]
    # The same body on v2alpha1 is served.
    answer = requests.post(f"{cloud.endpoint}/v2alpha1/{parent}/{path}", json=body, timeout=30)
    assert answer.status_code == 200, answer.text
