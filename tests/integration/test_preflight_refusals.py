"""What the preflight's faults do to creates and VMs in the sandbox, over raw HTTP: a quota limit
that creates respect on both backends, external IPs an org policy forbids, OS Login (a real sshd
that accepts the imported key and not the metadata one) and Cloud NAT's route out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.integration.compute_http import PROJECT, V6E_ZONE, Compute, tpu_vm
from tpuwizard.sandbox.workers import image

V6E_SPOT = "PREEMPTIBLE-TPU-V6E-per-project-region"
FAMILY = "TPUS-PER-TPU-FAMILY-per-project-region"
TPU_V6E_SPOT = "TPUV6EPreemptiblePerProjectPerRegionForTPUAPI"
TPU_V6E = "TPUV6EPerProjectPerRegionForTPUAPI"
USER = "practice@example.com"


class Tpu:
    """The sandbox's TPU API v2 for one project and zone, over plain HTTP."""

    def __init__(self, endpoint: str, zone: str = V6E_ZONE) -> None:
        self.base = f"{endpoint}/v2/projects/{PROJECT}/locations/{zone}"

    def create(self, node_id: str, accelerator: str = "v6e-4", **node: Any) -> requests.Response:
        body = {"acceleratorType": accelerator, "runtimeVersion": "v2-alpha-tpuv6e", **node}
        return requests.post(
            f"{self.base}/nodes", params={"nodeId": node_id}, json=body, timeout=30
        )

    def spot_queued(self, qr_id: str, accelerator: str = "v6e-4") -> requests.Response:
        body = {
            "tpu": {
                "nodeSpec": [
                    {
                        "parent": f"projects/{PROJECT}/locations/{V6E_ZONE}",
                        "nodeId": f"{qr_id}-node",
                        "node": {
                            "acceleratorType": accelerator,
                            "runtimeVersion": "v2-alpha-tpuv6e",
                        },
                    }
                ]
            },
            "spot": {},
        }
        return requests.post(
            f"{self.base}/queuedResources",
            params={"queuedResourceId": qr_id},
            json=body,
            timeout=30,
        )

    def get(self, node_id: str) -> requests.Response:
        return requests.get(f"{self.base}/nodes/{node_id}", timeout=30)


def spot() -> dict[str, Any]:
    return {"schedulingConfig": {"spot": True}}


def test_a_tpu_api_create_past_its_quota_limit_is_refused_as_google_refuses_it(sandbox):
    server, _ = sandbox(f"quota_limit={TPU_V6E_SPOT}:8")
    tpu = Tpu(server.endpoint)
    assert tpu.create("spot-a", "v6e-4", **spot()).status_code == 200
    assert tpu.spot_queued("spot-qr", "v6e-4").status_code == 200  # 8 of 8, one still waiting
    refused = tpu.create("spot-b", "v6e-1", **spot())
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["status"] == "RESOURCE_EXHAUSTED"
    assert error["message"] == (
        f"Quota limit '{TPU_V6E_SPOT}' has been exceeded. Limit: 8 in region us-east5."
    )
    assert error["details"][0]["violations"][0]["description"] == TPU_V6E_SPOT
    assert tpu.get("spot-b").status_code == 404  # nothing was made
    # The on-demand pool is another quota, and another region another limit.
    assert tpu.create("vm-a", "v6e-8").status_code == 200
    assert Tpu(server.endpoint, "us-central1-a").create("c-spot", "v5litepod-4", **spot()).ok


def test_a_tpu_api_create_is_refused_in_the_one_region_whose_limit_is_zero(sandbox):
    server, _ = sandbox(f"quota_limit={TPU_V6E}@us-east5:0")
    assert Tpu(server.endpoint).create("east", "v6e-1").status_code == 429
    assert Tpu(server.endpoint, "europe-west4-a").create("west", "v6e-1").status_code == 200


def test_a_compute_insert_past_its_quota_limit_ends_with_quota_exceeded(sandbox):
    server, _ = sandbox(f"quota_limit={V6E_SPOT}:4;quota_limit={FAMILY}:0", delay=0.05)
    compute = Compute(server.endpoint)
    assert "error" not in compute.wait(compute.insert(tpu_vm("spot-a", model="SPOT")))
    over = compute.wait(compute.insert(tpu_vm("spot-b", model="SPOT")))
    (error,) = over["error"]["errors"]
    assert error["code"] == "QUOTA_EXCEEDED"
    assert (
        error["message"] == "Quota 'PREEMPTIBLE_TPU_V6E' exceeded.  Limit: 4.0 in region us-east5."
    )
    assert error["errorDetails"][0]["quotaInfo"]["limitName"] == V6E_SPOT
    assert compute.get("spot-b").status_code == 404
    # regions.get reports only metrics of compute.v1.json's enum: none of them counts v6e.
    region = compute.call("GET", "/regions/us-east5").json()
    quotas = {q["metric"]: q for q in region["quotas"]}
    assert "PREEMPTIBLE_TPU_V6E" not in quotas and "TPUS_PER_TPU_FAMILY" not in quotas
    assert quotas["TPU_LITE_PODSLICE_V5"] == {
        "metric": "TPU_LITE_PODSLICE_V5",
        "limit": 100000.0,
        "usage": 0.0,
    }
    standard = compute.wait(compute.insert(tpu_vm("std-a")))
    assert standard["error"]["errors"][0]["errorDetails"][0]["quotaInfo"]["dimensions"] == {
        "tpu_family": "CT6E",
        "region": "us-east5",
    }


def test_quota_n_still_refuses_the_next_n_creates_whatever_the_limits(sandbox):
    server, _ = sandbox("quota=1")
    tpu = Tpu(server.endpoint)
    assert tpu.create("first", "v6e-1").status_code == 429
    assert tpu.create("second", "v6e-1").status_code == 200


def test_an_external_ip_the_org_policy_forbids_is_refused_on_both_backends(sandbox):
    server, _ = sandbox("no_external_ip=1", delay=0.05)
    compute = Compute(server.endpoint)
    refused = compute.call("POST", f"/zones/{V6E_ZONE}/instances", json=tpu_vm("ext"))
    assert refused.status_code == 412
    error = refused.json()["error"]
    assert error["errors"][0]["reason"] == "conditionNotMet"
    assert error["message"].startswith("Constraint constraints/compute.vmExternalIpAccess violated")
    assert f"projects/{PROJECT}/zones/{V6E_ZONE}/instances/ext" in error["message"]
    assert "error" not in compute.wait(compute.insert(tpu_vm("internal", external=False)))
    tpu = Tpu(server.endpoint)
    node = tpu.create("ext-node", "v6e-1", networkConfig={"enableExternalIps": True})
    assert node.status_code == 400
    assert node.json()["error"]["status"] == "FAILED_PRECONDITION"
    assert "compute.vmExternalIpAccess" in node.json()["error"]["message"]
    assert tpu.create("int-node", "v6e-1", networkConfig={"enableExternalIps": False}).ok


def new_key(folder: Path, name: str) -> tuple[Path, str]:
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path, path.with_suffix(".pub").read_text().strip()


def ssh_ok(key: Path, user: str, port: int) -> bool:
    done = subprocess.run(
        [
            "ssh", "-i", str(key), "-p", str(port), "-o", "BatchMode=yes",
            "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
            f"{user}@127.0.0.1", "true",
        ],
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return done.returncode == 0


def test_under_os_login_the_vm_accepts_the_imported_key_not_the_metadata_one(
    sandbox, sshd, tmp_path
):
    server, _ = sandbox(
        "oslogin=1", delay=0.05, authorized_keys=sshd.authorized_keys, ssh_port=sshd.port
    )
    compute = Compute(server.endpoint)
    metadata_key, metadata_pub = new_key(tmp_path, "metadata_key")
    imported_key, imported_pub = new_key(tmp_path, "imported_key")
    compute.wait(compute.insert(tpu_vm("os-login", ssh_key=metadata_pub)))
    profile = requests.get(f"{server.endpoint}/v1/users/{USER}/loginProfile", timeout=30).json()
    user = profile["posixAccounts"][0]["username"]
    assert not ssh_ok(metadata_key, user, sshd.port)
    imported = requests.post(
        f"{server.endpoint}/v1/users/{USER}:importSshPublicKey",
        json={"key": imported_pub, "expirationTimeUsec": "4102444800000000"},
        timeout=30,
    ).json()
    assert ssh_ok(imported_key, user, sshd.port)
    (fingerprint,) = imported["loginProfile"]["sshPublicKeys"]
    requests.delete(f"{server.endpoint}/v1/users/{USER}/sshPublicKeys/{fingerprint}", timeout=30)
    assert not ssh_ok(imported_key, user, sshd.port)


def keys_after(sandbox, tmp_path, faults: str, pub: str, metadata: list[dict], expires: str):
    keys = tmp_path / "authorized_keys"
    server, _ = sandbox(faults, delay=0.05, authorized_keys=keys)
    compute = Compute(server.endpoint)
    body = tpu_vm("vm", ssh_key="ssh-ed25519 AAAAmetadata tpuwizard")
    body["metadata"]["items"] += metadata
    compute.wait(compute.insert(body))
    requests.post(
        f"{server.endpoint}/v1/users/{USER}:importSshPublicKey",
        json={"key": pub, "expirationTimeUsec": expires},
        timeout=30,
    )
    return keys.read_text()


PUB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINkKayT+z56Rqueg5gMWke7fQQssStS01JhIKMeNxqJM imported"
LATER = "4102444800000000"


@pytest.mark.parametrize(
    ("faults", "metadata", "expires", "metadata_key", "imported_key"),
    [
        (None, [], LATER, True, False),  # no OS Login: metadata keys only
        ("oslogin=1", [], LATER, False, True),
        ("oslogin=1", [], "1000000", False, False),  # the imported key has expired
        ("oslogin=1;oslogin_denied=1", [], LATER, False, False),
        # the instance's own metadata wins over the project's, but not over the org policy
        ("oslogin=1", [{"key": "enable-oslogin", "value": "FALSE"}], LATER, True, False),
        (None, [{"key": "enable-oslogin", "value": "TRUE"}], LATER, False, True),
        ("oslogin=policy", [{"key": "enable-oslogin", "value": "FALSE"}], LATER, False, True),
    ],
)
def test_which_keys_a_vm_accepts(
    sandbox, tmp_path, faults, metadata, expires, metadata_key, imported_key
):
    accepted = keys_after(sandbox, tmp_path, faults, PUB, metadata, expires)
    assert ("ssh-ed25519 AAAAmetadata tpuwizard" in accepted) is metadata_key
    assert (PUB in accepted) is imported_key


@pytest.mark.parametrize(("faults", "route_out"), [(None, False), ("cloud_nat=us-east5", True)])
def test_an_internal_ip_vm_reaches_package_indexes_only_through_cloud_nat(
    sandbox, faults, route_out
):
    server, _ = sandbox(faults, delay=0.05)
    compute = Compute(server.endpoint)
    compute.wait(compute.insert(tpu_vm("nat", external=False)))
    compute.until("nat", "RUNNING")
    name = f"projects/{PROJECT}/zones/{V6E_ZONE}/instances/nat"
    folder = image.image_folder(server.state.vms.instance_folder(name))
    assert json.loads((folder / "image.json").read_text())["external"] is route_out
