"""The sandbox's answers to the methods gcloud calls beyond tpuwizard's, as Google gives them:
nodes.patch by update mask (the ssh key gcloud adds reaches the VM), a create by chip topology,
single accelerator types and runtime versions, v1's lists and guest attributes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpuwizard.sandbox.faults import parse_faults
from tpuwizard.sandbox.model import ApiError
from tpuwizard.sandbox.server import Api
from tpuwizard.sandbox.state import SandboxState
from tpuwizard.sandbox.tpu import nodes as sandbox_nodes

P, ZONE = "p", "us-central1-a"
NODE = f"projects/{P}/locations/{ZONE}/nodes/n"
KEY = "alice:ssh-ed25519 AAAAC3Nza alice"


@pytest.fixture
def api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Api:
    monkeypatch.setattr(sandbox_nodes, "UPDATE_SECONDS", 0.0)  # done at the next tick
    state = SandboxState(
        tmp_path / "sandbox", parse_faults(""), delay=0.0, authorized_keys=tmp_path / "keys"
    )
    return Api(state)


def settle(api: Api) -> None:
    with api.s.store.transaction():
        api.s.tick()


def make_node(api: Api, node_id: str = "n", **fields: object) -> dict:
    body = {"acceleratorType": "v5litepod-4", "runtimeVersion": "v2-alpha-tpuv5-lite", **fields}
    with api.s.store.transaction():
        api.create_node("v2", P, ZONE, query={"nodeId": node_id}, body=body)
    settle(api)
    return api.get_node("v2", P, ZONE, node_id, query={}, body={})


def patch(api: Api, mask: str, body: dict, project: str = P, zone: str = ZONE) -> dict:
    with api.s.store.transaction():
        op = api.gcloud.patch_node("v2", project, zone, "n", query={"updateMask": mask}, body=body)
    settle(api)
    return api.s.operations.get_operation(op["name"])


def test_a_metadata_patch_replaces_the_nodes_metadata_and_its_key_reaches_the_vm(api, tmp_path):
    make_node(api, metadata={"startup": "x"})
    done = patch(api, "metadata", {"metadata": {"ssh-keys": f"\n{KEY}"}})
    assert done["done"] and done["metadata"]["verb"] == "update"
    assert done["response"]["@type"] == "type.googleapis.com/google.cloud.tpu.v2.Node"
    node = api.get_node("v2", P, ZONE, "n", query={}, body={})
    assert node["metadata"] == {"ssh-keys": f"\n{KEY}"}  # the mask's field, replaced whole
    assert (tmp_path / "keys").read_text() == "ssh-ed25519 AAAAC3Nza alice\n"


def test_fields_outside_the_mask_stay_and_a_masked_field_left_out_is_cleared(api):
    make_node(api, labels={"owner": "a"}, description="kept")
    patch(api, "labels,metadata", {"metadata": {"k": "v"}, "description": "ignored"})
    node = api.get_node("v2", P, ZONE, "n", query={}, body={})
    assert "labels" not in node and node["metadata"] == {"k": "v"}
    assert node["description"] == "kept"


def test_external_ips_follow_an_update_of_network_config(api):
    assert "accessConfig" not in make_node(api)["networkEndpoints"][0]
    patch(api, "network_config.enable_external_ips", {"networkConfig": {"enableExternalIps": True}})
    node = api.get_node("v2", P, ZONE, "n", query={}, body={})
    assert node["networkEndpoints"][0]["accessConfig"] == {"externalIp": "127.0.0.1"}
    assert node["networkConfig"] == {"enableExternalIps": True}


@pytest.mark.parametrize("mask", ["", "acceleratorType", "metadata,runtimeVersion"])
def test_an_update_mask_google_does_not_support_is_refused(api, mask):
    make_node(api)
    with pytest.raises(ApiError) as err:
        patch(api, mask, {"metadata": {"ssh-keys": KEY}})
    assert (err.value.http, err.value.status) == (400, "INVALID_ARGUMENT")
    assert "network_config.enable_external_ips" in err.value.message


def test_a_patch_reaches_only_the_node_of_that_project_and_zone(api):
    make_node(api)
    with pytest.raises(ApiError) as other_project:
        patch(api, "metadata", {"metadata": {}}, project="q")
    assert other_project.value.http == 404
    with pytest.raises(ApiError) as forbidden:
        patch(api, "metadata", {"metadata": {}}, zone="europe-west1-b")
    assert forbidden.value.http == 403  # google-behaviour.md:44


def test_a_queued_resources_node_takes_a_key_but_is_still_deleted_only_with_it(api):
    with api.s.store.transaction():
        api.create_queued(
            "v2",
            P,
            ZONE,
            query={"queuedResourceId": "qr"},
            body={
                "tpu": {
                    "nodeSpec": [
                        {
                            "parent": f"projects/{P}/locations/{ZONE}",
                            "nodeId": "n",
                            "node": {
                                "acceleratorType": "v5litepod-4",
                                "runtimeVersion": "v2-alpha-tpuv5-lite",
                            },
                        }
                    ]
                },
                "spot": {},
            },
        )
    for _ in range(3):
        settle(api)
    assert patch(api, "metadata", {"metadata": {"ssh-keys": KEY}})["done"]
    assert api.s.data["nodes"][NODE]["metadata"] == {"ssh-keys": KEY}
    with pytest.raises(ApiError) as err, api.s.store.transaction():
        api.delete_node("v2", P, ZONE, "n", query={}, body={})
    assert err.value.status == "FAILED_PRECONDITION"


def test_an_update_of_a_node_deleted_meanwhile_ends_in_an_error(api):
    make_node(api)
    with api.s.store.transaction():
        op = api.gcloud.patch_node("v2", P, ZONE, "n", query={"updateMask": "labels"}, body={})
        api.s.vms.remove_node(NODE)
    settle(api)
    assert api.s.operations.get_operation(op["name"])["error"]["code"] == 5


@pytest.mark.parametrize(
    ("kind", "topology", "accelerator"),
    [("V5LITE_POD", "2x2", "v5litepod-4"), ("V4", "2x2x1", "v4-8"), ("V5P", "2x2x2", "v5p-16")],
)
def test_a_create_by_chip_topology_makes_the_type_its_chips_come_to(
    api, kind, topology, accelerator
):
    zone = {"V5LITE_POD": ZONE, "V4": "us-central2-b", "V5P": "us-east5-a"}[kind]
    config = {"type": kind, "topology": topology}
    body = {"acceleratorConfig": config, "runtimeVersion": "rt"}
    with api.s.store.transaction():
        api.create_node("v2alpha1", P, zone, query={"nodeId": "t"}, body=body)
    node = api.get_node("v2alpha1", P, zone, "t", query={}, body={})
    assert node["acceleratorType"] == accelerator
    assert node["acceleratorConfig"] == config


@pytest.mark.parametrize(
    "body",
    [
        {"acceleratorConfig": {"type": "V5LITE_POD", "topology": "2x2x1"}},  # v5e is AxB
        {"acceleratorConfig": {"type": "V4", "topology": "2x2"}},  # v4 is AxBxC
        {"acceleratorConfig": {"type": "TPU7X", "topology": "2x2x1"}},  # not in this API
        {
            "acceleratorConfig": {"type": "V5LITE_POD", "topology": "2x4"},
            "acceleratorType": "v5litepod-4",
        },
        {"acceleratorConfig": {"type": "V5LITE_POD", "topology": "3x3"}},  # 9 chips: no such type
        {},  # neither
    ],
)
def test_a_create_whose_type_or_topology_is_wrong_is_refused(api, body):
    with pytest.raises(ApiError) as err, api.s.store.transaction():
        api.create_node("v2", P, ZONE, query={"nodeId": "t"}, body=dict(body, runtimeVersion="rt"))
    assert (err.value.http, err.value.status) == (400, "INVALID_ARGUMENT")
    assert api.s.data["nodes"] == {}


def test_single_accelerator_types_and_versions_are_read_as_the_list_names_them(api):
    listed = api.list_accelerator_types("v2", P, ZONE, query={}, body={})["acceleratorTypes"]
    one = api.gcloud.get_accelerator_type("v2", P, ZONE, "v5litepod-4", query={}, body={})
    assert one in listed
    version = api.gcloud.get_runtime_version(
        "v2", P, ZONE, "v2-alpha-tpuv5-lite", query={}, body={}
    )
    assert version == {
        "name": f"projects/{P}/locations/{ZONE}/runtimeVersions/v2-alpha-tpuv5-lite",
        "version": "v2-alpha-tpuv5-lite",
    }
    for missing in (
        lambda: api.gcloud.get_accelerator_type("v2", P, ZONE, "v6e-8", query={}, body={}),
        lambda: api.gcloud.get_runtime_version("v2", P, ZONE, "tpu-vm-tf-2.0", query={}, body={}),
    ):
        with pytest.raises(ApiError) as err:
            missing()
        assert err.value.http == 404


def test_v1_lists_accelerator_types_with_only_v1s_fields(api):
    v1 = api.gcloud.list_accelerator_types_v1("v1", P, ZONE, query={}, body={})["acceleratorTypes"]
    v2 = api.list_accelerator_types("v2", P, ZONE, query={}, body={})["acceleratorTypes"]
    assert v1 == [{"name": t["name"], "type": t["type"]} for t in v2]


def test_guest_attributes_answer_each_asked_worker(tmp_path):
    api = Api(SandboxState(tmp_path / "unpaired", parse_faults(""), delay=0.0))
    with api.s.store.transaction():
        body = {"acceleratorType": "v5litepod-16", "runtimeVersion": "rt"}
        api.create_node("v2", P, ZONE, query={"nodeId": "n"}, body=body)
    settle(api)
    every = api.gcloud.get_guest_attributes("v2", P, ZONE, "n", query={}, body={"workerIds": [""]})
    assert len(every["guestAttributes"]) == 4  # v5litepod-16: four VMs
    one = api.gcloud.get_guest_attributes("v2", P, ZONE, "n", query={}, body={"workerIds": ["3"]})
    # No sshd is paired with this sandbox: its VMs have no host key for the guest agent to publish.
    assert one == {"guestAttributes": [{"queryPath": "", "queryValue": {"items": []}}]}
    with pytest.raises(ApiError) as err:
        api.gcloud.get_guest_attributes("v2", P, ZONE, "n", query={}, body={"workerIds": ["4"]})
    assert err.value.http == 400
