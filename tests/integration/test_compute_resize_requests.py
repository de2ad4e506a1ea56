"""The course's Route 2B against the sandbox's Compute Engine, over raw HTTP: a global template,
a MIG of size 0, a resize request, as Google's pages describe them (mig_resize.py), and the calls
gcloud makes around them (images, autoscalers, operations, aggregated lists, batch).
"""

from __future__ import annotations

from datetime import datetime

import requests

from tests.integration.compute_http import (
    REGION,
    V6E_ZONE,
    Compute,
    course_mig,
    course_template,
    error_of,
    workload_policy,
)
from tests.waiting import wait_until
from tpuwizard.sandbox.compute.mig_resize import RESIZE_REQUEST_REFUSED

MIGS = f"/zones/{V6E_ZONE}/instanceGroupManagers"


def route_2b(compute: Compute, template: str = "tmpl", model: str = "FLEX_START") -> None:
    compute.ok("POST", "/global/instanceTemplates", json=course_template(template, model))
    compute.wait(compute.ok("POST", MIGS, json=course_mig("mig", template)))


def request(compute: Compute, name: str = "req-1", **extra) -> requests.Response:
    body = {"name": name, "resizeBy": 1, **extra}
    return compute.call("POST", f"{MIGS}/mig/resizeRequests", json=body)


def state_of(compute: Compute, name: str = "req-1") -> str:
    return compute.ok("GET", f"{MIGS}/mig/resizeRequests/{name}")["state"]


def test_a_resize_request_on_a_flex_start_mig_makes_its_vm_and_succeeds(sandbox):
    server, _ = sandbox(delay=0.1)
    compute = Compute(server.endpoint)
    route_2b(compute)
    assert compute.ok("GET", f"{MIGS}/mig")["zone"].endswith(f"/zones/{V6E_ZONE}")
    op = request(compute)
    assert op.status_code == 200, op.text
    assert op.json()["targetLink"].endswith(f"{MIGS}/mig")  # gcloud's waiter reads it so
    wait_until(lambda: state_of(compute) == "SUCCEEDED", 30, "the request SUCCEEDED")
    mig = compute.ok("GET", f"{MIGS}/mig")
    assert mig["targetSize"] == 1  # "The group's target size will be increased by this number"
    vm_name = compute.ok("POST", f"{MIGS}/mig/listManagedInstances")["managedInstances"][0]["name"]
    vm = compute.ok("GET", f"/zones/{V6E_ZONE}/instances/{vm_name}")
    # No requestedRunDuration: the template's maxRunDuration (4 h) bounds the VM.
    ends = vm["resourceStatus"]["scheduling"]["terminationTimestamp"]
    run = datetime.fromisoformat(ends) - datetime.fromisoformat(vm["lastStartTimestamp"])
    assert run.total_seconds() == 4 * 3600
    listed = compute.ok("GET", f"{MIGS}/mig/resizeRequests")
    assert [r["name"] for r in listed["items"]] == ["req-1"]
    compute.wait(compute.ok("DELETE", f"{MIGS}/mig/resizeRequests/req-1"))
    assert compute.ok("GET", f"{MIGS}/mig")["targetSize"] == 1  # its VM stays the MIG's


def test_the_run_duration_is_bounded_and_needed_without_flex_start(sandbox):
    server, _ = sandbox(delay=0.1)
    compute = Compute(server.endpoint)
    route_2b(compute)
    for seconds in ("599", str(7 * 24 * 3600 + 1)):  # "between 10 minutes and 7 days"
        answer = request(compute, requestedRunDuration={"seconds": seconds})
        assert answer.status_code == 400 and "requestedRunDuration" in error_of(answer)["message"]
    answer = request(compute, "req-2", requestedRunDuration={"seconds": "600"})
    assert answer.status_code == 200
    # A STANDARD template: gcloud's help says the flag is then required.
    compute.wait(compute.ok("DELETE", f"{MIGS}/mig"))
    route_2b(compute, "std", "STANDARD")
    assert request(compute).status_code == 400
    assert request(compute, requestedRunDuration={"seconds": "3600"}).status_code == 200


def test_the_reported_refusal_is_a_fault_key_not_the_default(sandbox):
    server, _ = sandbox(faults="resize_request_refused=1", delay=0.1)
    compute = Compute(server.endpoint)
    route_2b(compute)
    answer = request(compute)
    assert answer.status_code == 400 and error_of(answer)["message"] == RESIZE_REQUEST_REFUSED


def test_without_capacity_the_request_waits_and_can_be_cancelled(sandbox):
    server, _ = sandbox(faults=f"stockout={V6E_ZONE}", delay=0.1)
    compute = Compute(server.endpoint)
    route_2b(compute)
    assert request(compute).status_code == 200
    found = compute.ok("GET", f"{MIGS}/mig/resizeRequests/req-1")
    assert found["state"] == "ACCEPTED"
    error = found["status"]["lastAttempt"]["error"]["errors"][0]
    assert error["code"] == "ZONE_RESOURCE_POOL_EXHAUSTED"
    compute.wait(compute.ok("POST", f"{MIGS}/mig/resizeRequests/req-1/cancel"))
    assert state_of(compute) == "CANCELLED"
    assert compute.ok("GET", f"{MIGS}/mig")["targetSize"] == 0
    again = compute.call("POST", f"{MIGS}/mig/resizeRequests/req-1/cancel")
    assert again.status_code == 400


def test_what_gcloud_reads_around_route_2b_is_served(sandbox):
    server, _ = sandbox(delay=0.1)
    compute = Compute(server.endpoint)
    family = "/compute/v1/projects/debian-cloud/global/images/family/debian-12"
    image = compute.ok("GET", server.endpoint + family)
    assert image["family"] == "debian-12" and image["status"] == "READY"
    assert compute.ok("GET", image["selfLink"].replace(compute_base(), server.endpoint))["name"]
    unknown = compute.call("GET", server.endpoint + family.replace("debian-12", "nope"))
    assert unknown.status_code == 404
    route_2b(compute)
    assert compute.ok("GET", f"/zones/{V6E_ZONE}/autoscalers")["items"] == []
    assert compute.call("GET", f"/zones/{V6E_ZONE}/autoscalers/mig").status_code == 404
    ops = compute.ok("GET", f"/zones/{V6E_ZONE}/operations")["items"]
    assert [o["operationType"] for o in ops] == ["insert"]
    # A regional template and policy, with the region gcloud sends; then both aggregated lists.
    regional = dict(course_template("regional"), region=REGION)
    assert compute.call("POST", f"/regions/{REGION}/instanceTemplates", json=regional).ok
    policy = dict(workload_policy("wp"), region=REGION)
    assert compute.call("POST", f"/regions/{REGION}/resourcePolicies", json=policy).ok
    templates = compute.ok("GET", "/aggregated/instanceTemplates")["items"]
    names = {scope: [t["name"] for t in v["instanceTemplates"]] for scope, v in templates.items()}
    assert names == {"global": ["tmpl"], f"regions/{REGION}": ["regional"]}
    policies = compute.ok("GET", "/aggregated/resourcePolicies")["items"]
    assert list(policies) == [f"regions/{REGION}"]


def test_a_batch_deletes_several_templates_each_answered_in_its_part(sandbox):
    server, _ = sandbox(delay=0.1)
    compute = Compute(server.endpoint)
    for name in ("a1", "b1"):
        compute.ok("POST", "/global/instanceTemplates", json=course_template(name))
    base = "/compute/v1/projects/practice-project/global/instanceTemplates"
    parts = [
        f"--XX\r\nContent-Type: application/http\r\nContent-ID: <id+{i}>\r\n\r\n"
        f"DELETE {base}/{name}?alt=json HTTP/1.1\r\nContent-Type: application/json\r\n\r\n"
        for i, name in enumerate(("a1", "b1", "c1"))
    ]
    answer = requests.post(
        server.endpoint + "/batch/compute/v1",
        data="".join(parts) + "--XX--\r\n",
        headers={"Content-Type": 'multipart/mixed; boundary="XX"'},
        timeout=30,
    )
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("multipart/")
    text = answer.text
    for i, status in enumerate(("200 OK", "200 OK", "404 Not Found")):
        assert f"Content-ID: <response-id+{i}>\r\n\r\nHTTP/1.1 {status}" in text
    assert compute.ok("GET", "/global/instanceTemplates")["items"] == []


def compute_base() -> str:
    return "https://compute.googleapis.com"
