"""The Compute Engine create body (compute-engine.md, "One VM"): every create carries a deadline
Google enforces, the route is the instance's scheduling, and an accelerator Compute Engine has no
machine type for is refused before any call."""

from __future__ import annotations

import pytest

from tpuwizard.core.cloud.compute import body as cb
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE = "us-east5-a"


def request(**fields: object) -> NodeRequest:
    base: dict[str, object] = dict(
        zone=ZONE,
        node_id="tpu-a",
        slice=parse_accelerator("v6e-4"),
        run_id="run1",
        metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAA key"},
        owner="own1",
        route="vm",
        max_run_s=3600,
    )
    base.update(fields)
    return NodeRequest(**base)  # type: ignore[arg-type]


def test_an_on_demand_body_has_the_deadline_the_image_the_key_and_the_labels():
    body = cb.instance_body(request())
    assert body["machineType"] == f"zones/{ZONE}/machineTypes/ct6e-standard-4t"
    s = body["scheduling"]
    assert s == {
        "provisioningModel": "STANDARD",
        "onHostMaintenance": "TERMINATE",
        "automaticRestart": False,
        "instanceTerminationAction": "DELETE",
        "maxRunDuration": {"seconds": "3600"},
    }
    (disk,) = body["disks"]
    assert disk["boot"] and disk["autoDelete"]
    params = disk["initializeParams"]
    assert params["sourceImage"].endswith("family/ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e")
    assert params["sourceImage"].startswith("projects/ubuntu-os-accelerator-images/")
    assert int(params["diskSizeGb"]) >= 50 and params["diskType"].endswith("hyperdisk-balanced")
    assert body["networkInterfaces"] == [
        {"accessConfigs": [{"type": "ONE_TO_ONE_NAT", "name": "external-nat"}]}
    ]
    assert body["metadata"] == {
        "items": [{"key": "ssh-keys", "value": "tpuwizard:ssh-ed25519 AAAA key"}]
    }
    assert body["labels"] == {
        "managed-by": "tpuwizard",
        "tpuwizard-run": "run1",
        "tpuwizard-owner": "own1",
    }
    assert body["serviceAccounts"][0]["email"] == "default"
    assert "params" not in body and "reservationAffinity" not in body


def test_internal_ips_ask_for_no_external_address_and_an_account_is_named():
    body = cb.instance_body(request(external_ips=False, service_account="sa@p.iam"))
    assert body["networkInterfaces"] == [{}]
    assert body["serviceAccounts"] == [
        {"email": "sa@p.iam", "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}
    ]


def test_spot_is_the_provisioning_model_and_still_deleted_at_the_deadline():
    s = cb.instance_body(request(route="spot", spot=True))["scheduling"]
    assert s["provisioningModel"] == "SPOT" and s["instanceTerminationAction"] == "DELETE"
    assert s["maxRunDuration"] == {"seconds": "3600"}


def test_flex_start_takes_no_reservation_and_a_bounded_queue_wait():
    body = cb.instance_body(request(route="flex", queue_wait_s=1800))
    assert body["scheduling"]["provisioningModel"] == "FLEX_START"
    assert body["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert body["params"] == {"requestValidForDuration": {"seconds": "1800"}}
    # 0 ("only if there is capacity now") is sent as the least Google accepts.
    zero = cb.instance_body(request(route="flex", queue_wait_s=0))
    assert zero["params"]["requestValidForDuration"] == {"seconds": "90"}
    with pytest.raises(BadInput, match="120"):
        cb.instance_body(request(route="flex", queue_wait_s=3 * 3600))


@pytest.mark.parametrize(
    ("route", "seconds"),
    [("vm", None), ("vm", 10), ("vm", 121 * 86400), ("flex", 8 * 86400)],
)
def test_no_create_without_a_deadline_google_accepts(route, seconds):
    with pytest.raises(BadInput, match="--max-run"):
        cb.instance_body(request(route=route, max_run_s=seconds))


@pytest.mark.parametrize(
    ("accelerator", "machine"),
    [
        ("v6e-1", "ct6e-standard-1t"),
        ("v6e-8", "ct6e-standard-8t"),
        ("v5p-8", "ct5p-hightpu-4t"),
        ("tpu7x-8", "tpu7x-standard-4t"),
    ],
)
def test_each_machine_type_and_back(accelerator, machine):
    assert cb.machine_type(parse_accelerator(accelerator)) == machine
    assert cb.accelerator_of(f"https://x/zones/{ZONE}/machineTypes/{machine}") == accelerator


def test_tpu7x_boots_its_own_image_and_v5p_a_balanced_disk():
    tpu7x = cb.instance_body(request(slice=parse_accelerator("tpu7x-8")))["disks"][0]
    assert tpu7x["initializeParams"]["sourceImage"].endswith("ubuntu-accel-2404-amd64-tpu-tpu7x")
    v5p = cb.instance_body(request(slice=parse_accelerator("v5p-8")))["disks"][0]
    assert v5p["initializeParams"]["diskType"].endswith("/pd-balanced")


@pytest.mark.parametrize(
    ("accelerator", "says"),
    [("v5litepod-4", "--backend tpu-api"), ("v6e-16", "v6e-1, v6e-4, v6e-8"), ("v4-8", "v4")],
)
def test_types_without_a_machine_type_are_bad_input(accelerator, says):
    with pytest.raises(BadInput, match=says):
        cb.instance_body(request(slice=parse_accelerator(accelerator)))
    assert cb.accelerator_of("ct5lp-hightpu-4t") is None
