"""The sandbox's Compute Engine paths behave as Google does by default (compute-engine.md), over
raw HTTP: insert, read, list, delete, operations, zones and machine types, and each rule of an
insert's body."""

from __future__ import annotations

from datetime import datetime

import pytest
import requests

from tests.integration.compute_http import PROJECT, V6E_ZONE, Compute, error_of, tpu_vm
from tpuwizard.core.plan import catalog
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPractice practice"


@pytest.fixture
def compute(sandbox):
    server, _ = sandbox(delay=0.3)
    return Compute(server.endpoint)


def test_an_insert_runs_asynchronously_through_provisioning_and_staging(compute):
    op = compute.insert(tpu_vm("vm-a"))
    assert op["kind"] == "compute#operation" and op["status"] in ("PENDING", "RUNNING")
    assert op["operationType"] == "insert"
    assert op["targetLink"].endswith(f"/projects/{PROJECT}/zones/{V6E_ZONE}/instances/vm-a")
    assert op["selfLink"].endswith(f"/zones/{V6E_ZONE}/operations/{op['name']}")
    assert compute.statuses("vm-a") == ["PROVISIONING", "STAGING", "RUNNING"]
    done = compute.wait(op)
    assert "error" not in done
    assert compute.ok("GET", f"/zones/{V6E_ZONE}/operations/{op['name']}")["status"] == "DONE"


def test_an_instance_reads_back_as_google_writes_it(compute):
    compute.wait(compute.insert(tpu_vm("vm-b")))
    vm = compute.get("vm-b").json()
    assert vm["kind"] == "compute#instance" and vm["status"] == "RUNNING"
    assert int(vm["id"]) > 0 and isinstance(vm["id"], str)
    datetime.fromisoformat(vm["creationTimestamp"])  # RFC 3339
    assert vm["selfLink"] == f"{vm['zone']}/instances/vm-b"
    assert vm["zone"].endswith(f"/compute/v1/projects/{PROJECT}/zones/{V6E_ZONE}")
    assert vm["machineType"] == f"{vm['zone']}/machineTypes/ct6e-standard-4t"
    assert vm["labels"] == {"managed-by": "tpuwizard", "run": "vm-b"}
    assert vm["scheduling"]["provisioningModel"] == "STANDARD"
    nic = vm["networkInterfaces"][0]
    assert nic["networkIP"].startswith("127.") and nic["accessConfigs"][0]["natIP"] == "127.0.0.1"
    assert vm["serviceAccounts"][0]["email"].endswith("-compute@developer.gserviceaccount.com")


def test_without_an_access_config_there_is_no_external_address(compute):
    compute.wait(compute.insert(tpu_vm("vm-int", external=False)))
    assert "accessConfigs" not in compute.get("vm-int").json()["networkInterfaces"][0]


def test_the_termination_time_is_set_on_running_and_google_deletes_the_vm_then(sandbox):
    server, _ = sandbox(delay=0.05)
    compute = Compute(server.endpoint)
    compute.wait(compute.insert(tpu_vm("vm-short", run_s=30)))
    vm = compute.get("vm-short").json()
    ends = datetime.fromisoformat(vm["resourceStatus"]["scheduling"]["terminationTimestamp"])
    started = datetime.fromisoformat(vm["lastStartTimestamp"])
    assert (ends - started).total_seconds() == pytest.approx(30, abs=0.01)
    # The clock moves on: past the termination time the VM is gone (DELETE), as Google does it.
    key = f"projects/{PROJECT}/zones/{V6E_ZONE}/instances/vm-short"
    with server.state.store.transaction():
        server.state.data["instances"][key]["_ends_at"] = 0.0
        server.state.store.save()
    compute.until("vm-short", "GONE")


def test_a_stop_action_stops_the_vm_clears_its_deadline_and_then_setscheduling_works(sandbox):
    server, _ = sandbox(delay=0.05)
    compute = Compute(server.endpoint)
    compute.wait(compute.insert(tpu_vm("vm-stop", run_s=30, action="STOP")))
    path = f"/zones/{V6E_ZONE}/instances/vm-stop/setScheduling"
    refused = compute.call("POST", path, json={"onHostMaintenance": "TERMINATE"})
    assert refused.status_code == 400
    assert "can only be called on a stopped instance" in error_of(refused)["message"]
    key = f"projects/{PROJECT}/zones/{V6E_ZONE}/instances/vm-stop"
    with server.state.store.transaction():
        server.state.data["instances"][key]["_ends_at"] = 0.0
        server.state.store.save()
    vm = compute.until("vm-stop", "TERMINATED")
    assert "resourceStatus" not in vm  # the termination timestamp is cleared on a stop
    op = compute.ok(
        "POST", path, json={"maxRunDuration": {"seconds": "600"}, "onHostMaintenance": "TERMINATE"}
    )
    assert op["operationType"] == "setScheduling" and compute.wait(op).get("error") is None
    assert compute.get("vm-stop").json()["scheduling"]["maxRunDuration"] == {"seconds": "600"}


def test_flex_start_waits_pending_then_runs(compute):
    op = compute.insert(tpu_vm("vm-flex", model="FLEX_START", wait_s=600))
    assert compute.statuses("vm-flex") == ["PENDING", "PROVISIONING", "STAGING", "RUNNING"]
    assert "error" not in compute.wait(op)


def test_flex_start_with_no_wait_runs_when_capacity_is_there(compute):
    op = compute.insert(tpu_vm("vm-flex0", model="FLEX_START", wait_s=0))
    assert "error" not in compute.wait(op)
    assert compute.get("vm-flex0").json()["status"] == "RUNNING"


def test_deleting_an_instance_removes_its_worker_and_its_keys(sandbox, tmp_path):
    keys = tmp_path / "authorized_keys"
    server, _ = sandbox(delay=0.05, authorized_keys=keys)
    compute = Compute(server.endpoint)
    compute.wait(compute.insert(tpu_vm("vm-home", ssh_key=KEY)))
    assert KEY in keys.read_text()
    where = compute.call(
        "GET",
        f"{server.endpoint}/sandbox/v1/projects/{PROJECT}/zones/{V6E_ZONE}/instances/vm-home:workers",
    )
    home = where.json()["homes"][0]
    assert (tmp_path / "sandbox").joinpath(home).is_dir()
    assert "instances" in home  # never a TPU node's folder, whatever their names
    done = compute.wait(compute.delete("vm-home"))
    assert done["operationType"] == "delete" and "error" not in done
    assert compute.get("vm-home").status_code == 404
    assert not (tmp_path / "sandbox").joinpath(home).exists()
    assert KEY not in keys.read_text()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"onHostMaintenance": "MIGRATE"}, "onHostMaintenance"),
        ({"onHostMaintenance": None}, "onHostMaintenance"),
        ({"maxRunDuration": {"seconds": "29"}}, "maxRunDuration.seconds"),
        ({"maxRunDuration": {"seconds": str(120 * 86400 + 1)}}, "maxRunDuration.seconds"),
        ({"instanceTerminationAction": None}, "instanceTerminationAction"),
    ],
)
def test_an_insert_google_refuses_is_a_400_naming_the_field(compute, changes, field):
    body = tpu_vm("vm-bad")
    for key, value in changes.items():
        if value is None:
            body["scheduling"].pop(key)
        else:
            body["scheduling"][key] = value
    answer = compute.call("POST", f"/zones/{V6E_ZONE}/instances", json=body)
    assert answer.status_code == 400
    assert f"resource.scheduling.{field}" in error_of(answer)["message"]
    assert compute.get("vm-bad").status_code == 404


def test_flex_start_over_seven_days_or_without_no_reservation_is_refused(compute):
    long = tpu_vm("vm-flex-long", model="FLEX_START", run_s=7 * 86400 + 1)
    answer = compute.call("POST", f"/zones/{V6E_ZONE}/instances", json=long)
    assert answer.status_code == 400 and "7 days" in error_of(answer)["message"]
    reserved = tpu_vm("vm-flex-res", model="FLEX_START")
    del reserved["reservationAffinity"]
    answer = compute.call("POST", f"/zones/{V6E_ZONE}/instances", json=reserved)
    assert answer.status_code == 400 and "NO_RESERVATION" in error_of(answer)["message"]
    ok = compute.insert(tpu_vm("vm-flex-7d", model="FLEX_START", run_s=7 * 86400))
    assert "error" not in compute.wait(ok)


def test_v5e_machine_types_are_refused_with_googles_403(compute):
    answer = compute.call(
        "POST",
        "/zones/us-west4-a/instances",
        json=tpu_vm("vm-5e", "us-west4-a", "ct5lp-hightpu-4t"),
    )
    assert answer.status_code == 403
    assert error_of(answer)["message"] == (
        "This user agent is not allowed to use the machine type [ct5lp-hightpu-4t]"
    )


def test_machine_types_are_offered_where_the_catalog_has_the_generation(compute):
    table = catalog.documented_zone_table()
    expected = {
        "v6e": ["ct6e-standard-1t", "ct6e-standard-4t", "ct6e-standard-8t"],
        "v5p": ["ct5p-hightpu-4t"],
        "tpu7x": ["tpu7x-standard-4t"],
    }
    zones = [z["name"] for z in compute.ok("GET", "/zones")["items"]]
    assert sorted(zones) == sorted(table)
    for zone, types in table.items():
        generations = {catalog.parse_accelerator(t).generation.key for t in types}
        wanted = sorted(m for g in generations for m in expected.get(g, []))
        listed = compute.ok("GET", f"/zones/{zone}/machineTypes")
        assert sorted(m["name"] for m in listed.get("items", [])) == wanted, zone
    one = compute.ok("GET", "/zones/us-central1-c/machineTypes/tpu7x-standard-4t")
    assert one["kind"] == "compute#machineType" and one["zone"] == "us-central1-c"
    assert (
        compute.call("GET", f"/zones/{V6E_ZONE}/machineTypes/tpu7x-standard-4t").status_code == 404
    )
    wrong_zone = compute.call(
        "POST", "/zones/us-central1-c/instances", json=tpu_vm("vm-z", "us-central1-c")
    )
    assert wrong_zone.status_code == 400 and "does not exist in zone" in wrong_zone.text


def test_the_aggregated_list_filters_on_labels_and_refuses_a_bad_filter(compute):
    compute.insert(tpu_vm("vm-ours"))
    theirs = tpu_vm("vm-theirs")
    theirs["labels"] = {"owner": "someone"}
    compute.insert(theirs)
    listed = compute.ok(
        "GET", "/aggregated/instances", params={"filter": "labels.managed-by=tpuwizard"}
    )
    names = [i["name"] for scope in listed["items"].values() for i in scope.get("instances", [])]
    assert names == ["vm-ours"]
    assert listed["items"]["zones/us-central1-c"]["warning"]["code"] == "NO_RESULTS_ON_PAGE"
    everything = compute.ok("GET", "/aggregated/instances")["items"][f"zones/{V6E_ZONE}"]
    assert sorted(i["name"] for i in everything["instances"]) == ["vm-ours", "vm-theirs"]
    zonal = compute.ok("GET", f"/zones/{V6E_ZONE}/instances", params={"filter": "labels.owner:*"})
    assert [i["name"] for i in zonal["items"]] == ["vm-theirs"]
    bad = compute.call("GET", "/aggregated/instances", params={"filter": "labels.managed-by ~ x"})
    assert bad.status_code == 400 and "Invalid value for field 'filter'" in error_of(bad)["message"]


def test_unknown_paths_and_methods_answer_json_and_the_token_is_required(tmp_path):
    server = make_server(tmp_path / "s", delay=0.05, token="secret")
    start_in_thread(server)
    try:
        compute = Compute(server.endpoint, token="secret")
        missing = compute.call("GET", "/zones/us-east5-a/nothing")
        assert missing.status_code == 404 and error_of(missing)["errors"][0]["reason"] == "notFound"
        wrong = compute.call("PATCH", f"/zones/{V6E_ZONE}/instances/vm-x", json={})
        assert wrong.status_code == 405 and error_of(wrong)
        anonymous = requests.get(f"{server.endpoint}/compute/v1/projects/p/zones", timeout=10)
        assert anonymous.status_code == 401 and error_of(anonymous)
        assert compute.call("GET", "/zones").status_code == 200
    finally:
        server.shutdown()
        server.server_close()


def test_instances_survive_a_restart_of_the_sandbox(tmp_path):
    first = make_server(tmp_path / "s", delay=0.05)
    start_in_thread(first)
    Compute(first.endpoint).wait(Compute(first.endpoint).insert(tpu_vm("vm-kept")))
    first.shutdown()
    first.server_close()
    second = make_server(tmp_path / "s", delay=0.05)
    start_in_thread(second)
    try:
        assert Compute(second.endpoint).get("vm-kept").json()["status"] == "RUNNING"
    finally:
        second.shutdown()
        second.server_close()


def test_the_aggregated_machine_types_list_where_tpus_are_in_one_call(sandbox):
    # Google answers it (the survey of where TPU machine types are, compute/client.py list_zones);
    # without it practice fell back to zones.list, one round trip more than with Google.
    from tpuwizard.core.cloud.compute.client import ComputeCloud

    server, _ = sandbox(delay=0.0)
    listed = Compute(server.endpoint).ok(
        "GET", "/aggregated/machineTypes", params={"filter": 'name eq "ct6e-.*"'}
    )
    assert listed["kind"] == "compute#machineTypeAggregatedList"
    scoped = listed["items"][f"zones/{V6E_ZONE}"]["machineTypes"]
    assert {m["name"] for m in scoped} == {
        "ct6e-standard-1t",
        "ct6e-standard-4t",
        "ct6e-standard-8t",
    }
    assert "warning" in listed["items"]["zones/us-central1-c"]  # tpu7x and v5p only there
    assert not any("-ai1" in scope for scope in listed["items"])  # hidden until visible
    cloud = ComputeCloud(PROJECT, endpoint=server.endpoint, retry_deadline=10)
    asked: list[str] = []
    get = cloud.reads.get

    def counted(path: str, params: dict[str, str] | None = None) -> dict:
        asked.append(path)
        return get(path, params)

    cloud.reads.get = counted  # type: ignore[method-assign]
    assert V6E_ZONE in cloud.list_zones()
    assert asked == ["aggregated/machineTypes"]
