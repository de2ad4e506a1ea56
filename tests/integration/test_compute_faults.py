"""Faults on the sandbox's Compute Engine paths, from the same spec as the TPU API's, answered in
Compute Engine's shape (compute-engine.md:59-64), over raw HTTP."""

from __future__ import annotations

import pytest

from tests.integration.compute_http import PROJECT, V6E_ZONE, Compute, error_of, tpu_vm


def start(sandbox, faults: str, delay: float = 0.1) -> Compute:
    server, _ = sandbox(faults=faults, delay=delay)
    return Compute(server.endpoint)


def test_a_stockout_ends_the_insert_with_zone_resource_pool_exhausted_and_nothing_left(sandbox):
    compute = start(sandbox, f"stockout={V6E_ZONE}")
    done = compute.wait(compute.insert(tpu_vm("vm-so")))
    error = done["error"]["errors"][0]
    assert error["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    assert (
        f"'projects/{PROJECT}/zones/{V6E_ZONE}' does not have enough resources" in error["message"]
    )
    compute.until("vm-so", "GONE")
    other = compute.insert(tpu_vm("vm-ok", zone="us-east5-b"), zone="us-east5-b")
    assert "error" not in compute.wait(other, zone="us-east5-b")


def test_in_a_stockout_flex_start_waits_until_its_request_runs_out(sandbox):
    compute = start(sandbox, f"stockout={V6E_ZONE}")
    op = compute.insert(tpu_vm("vm-flex-so", model="FLEX_START", wait_s=1))
    assert compute.get("vm-flex-so").json()["status"] == "PENDING"
    done = compute.wait(op)
    assert done["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    compute.until("vm-flex-so", "GONE")  # a failed Flex-start create deletes itself


@pytest.mark.parametrize(
    ("model", "limit_name", "dimension"),
    [
        ("STANDARD", "TPUS-PER-TPU-FAMILY-per-project-region", {"tpu_family": "CT6E"}),
        ("SPOT", "PREEMPTIBLE-TPU-V6E-per-project-region", {}),
        ("FLEX_START", "PREEMPTIBLE-TPU-V6E-per-project-region", {}),
    ],
)
def test_quota_ends_the_insert_with_quota_exceeded_naming_metric_and_region(
    sandbox, model, limit_name, dimension
):
    compute = start(sandbox, "quota=1")
    done = compute.wait(compute.insert(tpu_vm("vm-q", model=model)))
    error = done["error"]["errors"][0]
    assert error["code"] == "QUOTA_EXCEEDED"
    assert "in region us-east5." in error["message"]
    info = error["errorDetails"][0]["quotaInfo"]
    assert info["limitName"] == limit_name
    assert info["dimensions"] == dict(dimension, region="us-east5")
    assert compute.get("vm-q").status_code == 404
    assert "error" not in compute.wait(compute.insert(tpu_vm("vm-q2", model=model)))  # N=1


def test_flex_pending_waits_forever_without_a_bound_and_fails_with_one(sandbox):
    compute = start(sandbox, "flex_pending=1", delay=0.05)
    compute.insert(tpu_vm("vm-forever", model="FLEX_START"))
    bounded = compute.insert(tpu_vm("vm-bounded", model="FLEX_START", wait_s=1))
    assert compute.wait(bounded)["error"]["errors"][0]["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    assert compute.get("vm-forever").json()["status"] == "PENDING"


def test_a_slow_pending_delete_outlasts_an_ordinary_one_and_then_the_instance_is_gone(sandbox):
    compute = start(sandbox, "flex_pending=1;slow_pending_delete=2", delay=0.05)
    compute.insert(tpu_vm("vm-slow", model="FLEX_START"))
    compute.wait(compute.insert(tpu_vm("vm-quick")))
    slow = compute.delete("vm-slow")
    assert "error" not in compute.wait(compute.delete("vm-quick"))  # started later, done first
    assert compute.get("vm-slow").json()["status"] == "STOPPING"  # still there, being deleted
    assert compute.ok("GET", f"/zones/{V6E_ZONE}/operations/{slow['name']}")["status"] == "RUNNING"
    assert "error" not in compute.wait(slow)
    assert compute.get("vm-slow").status_code == 404


def test_staging_error_ends_the_insert_with_internal_error_after_staging(sandbox):
    compute = start(sandbox, "staging_error=1", delay=0.3)
    op = compute.insert(tpu_vm("vm-ie"))
    assert compute.statuses("vm-ie") == ["PROVISIONING", "STAGING", "GONE"]
    assert compute.wait(op)["error"]["errors"][0]["code"] == "INTERNAL_ERROR"


def test_a_preempted_spot_vm_with_delete_is_deleted(sandbox):
    compute = start(sandbox, "preempt_after=0", delay=0.05)
    compute.wait(compute.insert(tpu_vm("vm-spot", model="SPOT")))
    compute.until("vm-spot", "GONE")
    compute.wait(compute.insert(tpu_vm("vm-std")))
    assert compute.get("vm-std").json()["status"] == "RUNNING"  # only spot VMs are preempted


def test_a_failed_or_lying_delete_leaves_the_instance_running(sandbox):
    compute = start(sandbox, "delete_fail=1;lying_delete=1", delay=0.05)
    compute.wait(compute.insert(tpu_vm("vm-d")))
    failed = compute.wait(compute.delete("vm-d"))
    assert failed["error"]["errors"][0]["code"] == "INTERNAL_ERROR"
    assert compute.get("vm-d").json()["status"] == "RUNNING"
    lied = compute.wait(compute.delete("vm-d"))
    assert "error" not in lied and compute.get("vm-d").json()["status"] == "RUNNING"
    compute.wait(compute.delete("vm-d"))
    assert compute.get("vm-d").status_code == 404


@pytest.mark.parametrize(
    ("spec", "status", "reason"),
    [
        ("unavailable=1", 503, "backendError"),
        ("forbidden=1", 403, "forbidden"),
        ("api_disabled=1", 403, "accessNotConfigured"),
        ("unauthenticated=1", 401, "authError"),
        ("read_error=1", 500, "backendError"),
    ],
)
def test_request_faults_answer_in_compute_engines_shape(sandbox, spec, status, reason):
    compute = start(sandbox, spec)
    answer = compute.call("GET", "/zones")
    assert answer.status_code == status
    assert error_of(answer)["errors"][0]["reason"] == reason
    if spec == "api_disabled=1":
        assert "Compute Engine API has not been used" in answer.json()["error"]["message"]
    assert compute.call("GET", "/zones").status_code == 200  # one, then none
