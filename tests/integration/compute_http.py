"""Raw HTTP against the sandbox's Compute Engine paths: what a client sends, with requests.

The tests of the sandbox's Compute Engine side use these instead of tpuwizard's client, so they
check what the sandbox answers, not what a client makes of it.
"""

from __future__ import annotations

import time
from typing import Any

import requests

PROJECT = "practice-project"
V6E_ZONE = "us-east5-a"  # v6e and v5p (catalog.toml)
IMAGE = (
    "projects/ubuntu-os-accelerator-images/global/images/family/"
    "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e"
)


def tpu_vm(
    name: str,
    zone: str = V6E_ZONE,
    machine: str = "ct6e-standard-4t",
    model: str = "STANDARD",
    run_s: int | None = 3600,
    action: str = "DELETE",
    wait_s: int | None = None,
    ssh_key: str | None = None,
    external: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """An insert body as tpuwizard's create makes it (compute-engine.md:27-48)."""
    scheduling: dict[str, Any] = {
        "provisioningModel": model,
        "onHostMaintenance": "TERMINATE",
        "automaticRestart": False,
        "instanceTerminationAction": action,
    }
    if run_s is not None:
        scheduling["maxRunDuration"] = {"seconds": str(run_s)}
    body: dict[str, Any] = {
        "name": name,
        "machineType": f"zones/{zone}/machineTypes/{machine}",
        "disks": [
            {
                "boot": True,
                "autoDelete": True,
                "initializeParams": {"sourceImage": IMAGE, "diskSizeGb": "100"},
            }
        ],
        "networkInterfaces": [
            {"accessConfigs": [{"type": "ONE_TO_ONE_NAT", "name": "External NAT"}]}
            if external
            else {}
        ],
        "scheduling": scheduling,
        "labels": {"managed-by": "tpuwizard", "run": name},
        "serviceAccounts": [
            {"email": "default", "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}
        ],
    }
    if model == "FLEX_START":
        body["reservationAffinity"] = {"consumeReservationType": "NO_RESERVATION"}
    if wait_s is not None:
        body["params"] = {"requestValidForDuration": {"seconds": str(wait_s)}}
    if ssh_key:
        body["metadata"] = {"items": [{"key": "ssh-keys", "value": f"tpuwizard:{ssh_key}"}]}
    body.update(extra)
    return body


class Compute:
    """The sandbox's Compute Engine v1 for one project, over plain HTTP."""

    def __init__(self, endpoint: str, token: str | None = None, project: str = PROJECT) -> None:
        self.base = f"{endpoint}/compute/v1/projects/{project}"
        self.endpoint = endpoint
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        url = path if path.startswith("http") else self.base + path
        return requests.request(method, url, headers=self.headers, timeout=30, **kw)

    def ok(self, method: str, path: str, **kw: Any) -> dict[str, Any]:
        answer = self.call(method, path, **kw)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def insert(self, body: dict[str, Any], zone: str = V6E_ZONE) -> dict[str, Any]:
        return self.ok("POST", f"/zones/{zone}/instances", json=body)

    def get(self, name: str, zone: str = V6E_ZONE) -> requests.Response:
        return self.call("GET", f"/zones/{zone}/instances/{name}")

    def delete(self, name: str, zone: str = V6E_ZONE) -> dict[str, Any]:
        return self.ok("DELETE", f"/zones/{zone}/instances/{name}")

    def wait(self, op: dict[str, Any], zone: str = V6E_ZONE) -> dict[str, Any]:
        """The operation once DONE, through zoneOperations.wait (which may return early)."""
        for _ in range(20):
            op = self.ok("POST", f"/zones/{zone}/operations/{op['name']}/wait")
            if op["status"] == "DONE":
                return op
        raise AssertionError(f"operation {op['name']} never DONE")

    def until(self, name: str, *statuses: str, zone: str = V6E_ZONE) -> dict[str, Any]:
        """The instance once its status is one of ``statuses`` ("GONE": a 404)."""
        seen: list[str] = []
        for _ in range(600):
            answer = self.get(name, zone)
            status = "GONE" if answer.status_code == 404 else answer.json()["status"]
            if not seen or seen[-1] != status:
                seen.append(status)
            if status in statuses:
                return {} if status == "GONE" else answer.json()
            time.sleep(0.05)
        raise AssertionError(f"{name} went {seen}, never {statuses}")

    def statuses(self, name: str, zone: str = V6E_ZONE) -> list[str]:
        """Every status the instance shows until it is RUNNING or gone, in order."""
        seen: list[str] = []
        for _ in range(600):
            answer = self.get(name, zone)
            status = "GONE" if answer.status_code == 404 else answer.json()["status"]
            if not seen or seen[-1] != status:
                seen.append(status)
            if status in ("RUNNING", "GONE"):
                return seen
            time.sleep(0.01)
        raise AssertionError(f"{name} went {seen}")


def error_of(answer: requests.Response) -> dict[str, Any]:
    """Compute Engine's error body, checked for its shape."""
    body = answer.json()["error"]
    assert body["code"] == answer.status_code
    assert body["errors"][0]["message"] == body["message"]
    assert body["errors"][0]["domain"] == "global"
    return body


REGION = "us-east5"


def workload_policy(name: str, topology: str = "4x4") -> dict[str, Any]:
    """compute-engine.md:70-71: a slice's workload policy."""
    return {
        "name": name,
        "description": "tpuwizard-id=run",
        "workloadPolicy": {
            "type": "HIGH_THROUGHPUT",
            "acceleratorTopology": topology,
            "acceleratorTopologyMode": "AUTO_CONNECT",
        },
    }


def slice_template(
    name: str, machine: str = "ct6e-standard-4t", run_s: int | None = 3600, **extra: Any
) -> dict[str, Any]:
    """compute-engine.md:72: a regional template whose properties are the instance body, with
    the machine type as a bare name (compute.v1.json InstanceProperties.machineType)."""
    properties = tpu_vm("unused", machine=machine, run_s=run_s, ssh_key="ssh-ed25519 AAAA k")
    del properties["name"]
    properties["machineType"] = machine
    properties["labels"] = {"managed-by": "tpuwizard", "tpuwizard-id": name}
    properties.update(extra)
    return {"name": name, "properties": properties}


def slice_mig(name: str, template: str, policy: str | None, zone: str = V6E_ZONE) -> dict:
    """compute-engine.md:73-75: a BULK MIG that does not repair, bound to the workload policy."""
    base = "https://compute.googleapis.com/compute/v1/projects/" + PROJECT
    body: dict[str, Any] = {
        "name": name,
        "description": "tpuwizard-id=run",
        "baseInstanceName": name,
        "instanceTemplate": f"{base}/regions/{REGION}/instanceTemplates/{template}",
        "targetSize": 0,
        "targetSizePolicy": {"mode": "BULK"},
        "instanceLifecyclePolicy": {"defaultActionOnFailure": "DO_NOTHING"},
    }
    if policy:
        body["resourcePolicies"] = {
            "workloadPolicy": f"{base}/regions/{REGION}/resourcePolicies/{policy}"
        }
    return body


class Slices(Compute):
    """The multi-host slice's paths: regional parts, the MIG and its operations."""

    def region_wait(self, op: dict[str, Any]) -> dict[str, Any]:
        for _ in range(20):
            op = self.ok("POST", f"/regions/{REGION}/operations/{op['name']}/wait")
            if op["status"] == "DONE":
                return op
        raise AssertionError(f"operation {op['name']} never DONE")

    def make_slice(self, name: str, size: int = 4, **template: Any) -> dict[str, Any]:
        """Policy, template, MIG, resize: the resize's operation."""
        for path, body in (
            ("resourcePolicies", workload_policy(f"{name}-policy")),
            ("instanceTemplates", slice_template(f"{name}-template", **template)),
        ):
            done = self.region_wait(self.ok("POST", f"/regions/{REGION}/{path}", json=body))
            assert "error" not in done, done
        mig = slice_mig(name, f"{name}-template", f"{name}-policy")
        self.wait(self.ok("POST", f"/zones/{V6E_ZONE}/instanceGroupManagers", json=mig))
        path = f"/zones/{V6E_ZONE}/instanceGroupManagers/{name}/resize"
        return self.wait(self.ok("POST", path, params={"size": str(size)}))

    def mig(self, name: str) -> dict[str, Any]:
        return self.ok("GET", f"/zones/{V6E_ZONE}/instanceGroupManagers/{name}")

    def managed(self, name: str) -> list[dict[str, Any]]:
        path = f"/zones/{V6E_ZONE}/instanceGroupManagers/{name}/listManagedInstances"
        return self.ok("POST", path).get("managedInstances", [])

    def topology(self, name: str) -> str | None:
        topologies = self.mig(name)["status"].get("appliedAcceleratorTopologies") or [{}]
        return topologies[0].get("state")

    def until_topology(self, name: str, *states: str) -> dict[str, Any]:
        seen: list[str | None] = []
        for _ in range(600):
            state = self.topology(name)
            if not seen or seen[-1] != state:
                seen.append(state)
            if state in states:
                return self.mig(name)
            time.sleep(0.05)
        raise AssertionError(f"{name}'s topology went {seen}, never {states}")


def course_template(
    name: str, model: str = "FLEX_START", machine: str = "ct6e-standard-4t"
) -> dict:
    """A global template as gcloud 528 sends the course's Route 2B one (`beta compute
    instance-templates create --provisioning-model=FLEX_START --max-run-duration=4h
    --instance-termination-action=DELETE --reservation-affinity=none`, with
    `--maintenance-policy=TERMINATE`): its default image and scopes, no labels."""
    scheduling: dict[str, Any] = {
        "automaticRestart": True,
        "onHostMaintenance": "TERMINATE",
        "provisioningModel": model,
    }
    if model == "FLEX_START":
        scheduling.update(instanceTerminationAction="DELETE", maxRunDuration={"seconds": "14400"})
    body: dict[str, Any] = {
        "name": name,
        "properties": {
            "canIpForward": False,
            "disks": [
                {
                    "autoDelete": True,
                    "boot": True,
                    "initializeParams": {
                        "sourceImage": "projects/debian-cloud/global/images/family/debian-12"
                    },
                    "mode": "READ_WRITE",
                    "type": "PERSISTENT",
                }
            ],
            "machineType": machine,
            "metadata": {},
            "networkInterfaces": [
                {"accessConfigs": [{"name": "external-nat", "type": "ONE_TO_ONE_NAT"}]}
            ],
            "scheduling": scheduling,
            "serviceAccounts": [
                {"email": "default", "scopes": ["https://www.googleapis.com/auth/logging.write"]}
            ],
        },
    }
    if model == "FLEX_START":
        body["properties"]["reservationAffinity"] = {"consumeReservationType": "NO_RESERVATION"}
    return body


def course_mig(name: str, template: str, zone: str = V6E_ZONE) -> dict[str, Any]:
    """A MIG of size 0 as gcloud 528 sends it: the template's URL, and the zone's name (output
    only in compute.v1.json, sent all the same)."""
    link = f"https://compute.googleapis.com/compute/v1/projects/{PROJECT}/global/instanceTemplates"
    return {"instanceTemplate": f"{link}/{template}", "name": name, "targetSize": 0, "zone": zone}
