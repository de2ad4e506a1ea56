"""Every body sent to the sandbox's Compute Engine paths and every reply it gives validates against
Google's discovery document for Compute Engine v1 (``compute.v1.json``, shipped by
google-api-python-client), as the TPU bodies are against tpu v2 (test_discovery_conformance).

The traffic: raw HTTP for every route, rule and fault the sandbox has, and Google's own Python
client (google-cloud-compute) for the calls tpuwizard's Compute Engine backend makes, so what
that client sends is checked too.
"""

from __future__ import annotations

import pytest

from tests.integration.compute_http import PROJECT, V6E_ZONE, Compute, tpu_vm
from tests.integration.discovery import document, errors, find_method, record_traffic

# Google's system parameters that the discovery document does not list ($alt: an alias of alt,
# which the generated REST clients send).
SYSTEM_PARAMETERS = {"$alt"}
ERROR_REASON_KEYS = {"message", "domain", "reason"}


def raw_http_traffic(compute: Compute) -> None:
    compute.ok("GET", "/zones")
    compute.ok("GET", f"/zones/{V6E_ZONE}")
    compute.ok(
        "GET", f"/zones/{V6E_ZONE}/machineTypes", params={"filter": "name = ct6e-standard-4t"}
    )
    compute.ok("GET", f"/zones/{V6E_ZONE}/machineTypes/ct6e-standard-4t")
    for name, model in (("c-std", "STANDARD"), ("c-spot", "SPOT"), ("c-flex", "FLEX_START")):
        compute.wait(
            compute.insert(tpu_vm(name, model=model, wait_s=600 if model == "FLEX_START" else None))
        )
        compute.ok("GET", f"/zones/{V6E_ZONE}/instances/{name}")
    compute.ok("GET", f"/zones/{V6E_ZONE}/instances", params={"maxResults": "1"})
    compute.ok("GET", "/aggregated/instances", params={"filter": "labels.managed-by=tpuwizard"})
    compute.call("POST", f"/zones/{V6E_ZONE}/instances/c-std/setScheduling", json={})
    compute.call(
        "POST", f"/zones/{V6E_ZONE}/instances", json=tpu_vm("c-5e", machine="ct5lp-hightpu-4t")
    )
    compute.call("GET", f"/zones/{V6E_ZONE}/instances/nowhere")
    compute.call("GET", "/aggregated/instances", params={"filter": "a ~ b"})
    for name in ("c-std", "c-spot", "c-flex"):
        compute.wait(compute.delete(name))


def fault_traffic(compute: Compute) -> None:
    """The faults' operations: stockout, quota, INTERNAL_ERROR."""
    for name in ("f-quota", "f-so"):
        compute.wait(compute.insert(tpu_vm(name)))
    ie = compute.insert(tpu_vm("f-ie", zone="us-east5-b"), zone="us-east5-b")
    compute.wait(ie, zone="us-east5-b")


def google_client_traffic(endpoint: str) -> None:
    """What google-cloud-compute sends and reads for tpuwizard's calls (insert_unary and the
    operation polled through its own ZoneOperationsClient, as compute-engine.md:98-102 says)."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    kw = {
        "credentials": AnonymousCredentials(),
        "client_options": {"api_endpoint": endpoint},
        "transport": "rest",
    }
    instances = compute_v1.InstancesClient(**kw)
    operations = compute_v1.ZoneOperationsClient(**kw)
    scheduling = compute_v1.Scheduling(
        provisioning_model="FLEX_START",
        on_host_maintenance="TERMINATE",
        automatic_restart=False,
        instance_termination_action="DELETE",
        max_run_duration=compute_v1.Duration(seconds=3600),
    )
    body = compute_v1.Instance(
        name="g-flex",
        machine_type=f"zones/{V6E_ZONE}/machineTypes/ct6e-standard-1t",
        disks=[
            compute_v1.AttachedDisk(
                boot=True,
                auto_delete=True,
                initialize_params=compute_v1.AttachedDiskInitializeParams(
                    source_image="projects/ubuntu-os-accelerator-images/global/images/family/"
                    "ubuntu-accel-2204-amd64-tpu-v5e-v5p-v6e",
                    disk_size_gb=100,
                ),
            )
        ],
        network_interfaces=[
            compute_v1.NetworkInterface(
                access_configs=[compute_v1.AccessConfig(type_="ONE_TO_ONE_NAT")]
            )
        ],
        scheduling=scheduling,
        reservation_affinity=compute_v1.ReservationAffinity(
            consume_reservation_type="NO_RESERVATION"
        ),
        params=compute_v1.InstanceParams(
            request_valid_for_duration=compute_v1.Duration(seconds=600)
        ),
        labels={"managed-by": "tpuwizard"},
        metadata=compute_v1.Metadata(
            items=[compute_v1.Items(key="ssh-keys", value="u:ssh-ed25519 AAAA u")]
        ),
        service_accounts=[
            compute_v1.ServiceAccount(
                email="default", scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        ],
    )
    op = instances.insert_unary(project=PROJECT, zone=V6E_ZONE, instance_resource=body, timeout=30)
    operations.wait(project=PROJECT, zone=V6E_ZONE, operation=op.name, timeout=30)
    operations.get(project=PROJECT, zone=V6E_ZONE, operation=op.name, timeout=30)
    instances.get(project=PROJECT, zone=V6E_ZONE, instance="g-flex", timeout=30)
    listing = compute_v1.AggregatedListInstancesRequest(
        project=PROJECT, filter="labels.managed-by=tpuwizard"
    )
    list(instances.aggregated_list(request=listing, timeout=30))
    list(instances.list(project=PROJECT, zone=V6E_ZONE, timeout=30))
    list(compute_v1.ZonesClient(**kw).list(project=PROJECT, timeout=30))
    list(compute_v1.MachineTypesClient(**kw).list(project=PROJECT, zone=V6E_ZONE, timeout=30))
    op = instances.delete_unary(project=PROJECT, zone=V6E_ZONE, instance="g-flex", timeout=30)
    operations.wait(project=PROJECT, zone=V6E_ZONE, operation=op.name, timeout=30)


def problems_in(traffic, doc) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    checked: set[str] = set()
    for method, path, query, body, status, reply in traffic:
        if not path.startswith("/compute/v1/"):
            continue
        where = f"{method} {path}"
        found = find_method(doc, method, path)
        if found is None:
            problems.append(f"{where}: no such method in compute.v1.json")
            continue
        checked.add(found.id)
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
            # compute.v1.json has no schema for the error envelope: Compute Engine's shape.
            error = reply.get("error", {})
            if error.get("code") != status or not isinstance(error.get("message"), str):
                problems.append(f"{where}: error body {reply} is not Compute Engine's")
            for item in error.get("errors", [None]):
                if not isinstance(item, dict) or set(item) != ERROR_REASON_KEYS:
                    problems.append(f"{where}: error item {item} is not Compute Engine's")
    return problems, checked


def test_every_compute_body_sent_and_every_reply_matches_googles_discovery_document(
    sandbox, monkeypatch
):
    traffic = record_traffic(monkeypatch)
    server, _ = sandbox(delay=0.05)
    raw_http_traffic(Compute(server.endpoint))
    google_client_traffic(server.endpoint)
    # Its own state: sharing the first's, the first (no faults) could advance f-so to RUNNING.
    faulty, _ = sandbox(
        faults=f"stockout={V6E_ZONE};quota=1;staging_error=1", delay=0.05, folder="faulty"
    )
    fault_traffic(Compute(faulty.endpoint))
    problems, checked = problems_in(traffic, document("v1", api="compute"))
    assert not problems, "\n".join(problems)
    for expected in (
        "compute.zones.list",
        "compute.zones.get",
        "compute.machineTypes.list",
        "compute.machineTypes.get",
        "compute.instances.insert",
        "compute.instances.get",
        "compute.instances.list",
        "compute.instances.aggregatedList",
        "compute.instances.delete",
        "compute.instances.setScheduling",
        "compute.zoneOperations.get",
        "compute.zoneOperations.wait",
    ):
        assert expected in checked, expected
    codes = {
        e["code"]
        for *_, status, reply in traffic
        if status == 200 and reply.get("kind") == "compute#operation"
        for e in reply.get("error", {}).get("errors", [])
    }
    # INTERNAL_ERROR after STAGING is asserted in test_compute_faults.py; here its operation's
    # body, when it came, was checked with the rest (which step the raw polls see is timing).
    assert {"ZONE_RESOURCE_POOL_EXHAUSTED", "QUOTA_EXCEEDED"} <= codes


def test_the_checker_catches_a_body_google_would_not_know(sandbox, monkeypatch):
    """The check can fail: a field compute.v1.json does not name is reported."""
    traffic = record_traffic(monkeypatch)
    server, _ = sandbox(delay=0.05)
    compute = Compute(server.endpoint)
    compute.call(
        "POST", f"/zones/{V6E_ZONE}/instances", json=tpu_vm("odd", acceleratorType="v6e-4")
    )
    problems, _ = problems_in(traffic, document("v1", api="compute"))
    assert any("field 'acceleratorType' is not in schema Instance" in p for p in problems)


@pytest.fixture(autouse=True)
def _google_client_installed():
    pytest.importorskip("google.cloud.compute_v1")
