"""One fault vocabulary: the same spec given to the sandbox (behind the real client) and to the
unit tests' in-memory cloud makes the same things happen, so a lifecycle rule the unit tests
check against the in-memory cloud is checked against what the sandbox, and Google, do."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from google.api_core import exceptions as gx

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.protocol import Cloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE = "us-central1-a"
DELAY = 0.3  # provisioning time in both: long enough to see CREATING


@pytest.fixture(params=["memory", "sandbox"])
def cloud_with(request, sandbox) -> Callable[[str], Cloud]:
    def make(spec: str) -> Cloud:
        if request.param == "memory":
            return MemoryCloud.faulty(spec, delay=DELAY)
        return sandbox(faults=spec, delay=DELAY)[1]

    return make


def node(name: str = "tpu-a") -> NodeRequest:
    return NodeRequest(
        zone=ZONE, node_id=name, slice=parse_accelerator("v5litepod-4"), run_id="run-1"
    )


def made(cloud: Cloud, name: str = "tpu-a") -> None:
    cloud.wait_for_node(ZONE, name, cloud.create_node(node(name)), poll=0.05)


def test_a_lost_create_answer_hides_a_node_that_exists(cloud_with):
    cloud = cloud_with("lost_create=1")
    with pytest.raises(gx.ServiceUnavailable):
        cloud.create_node(node())
    assert cloud.get_node(ZONE, "tpu-a") is not None
    with pytest.raises(gx.Conflict):
        cloud.create_node(node())
    states: list[str] = []
    assert cloud.wait_for_node(ZONE, "tpu-a", on_state=states.append, poll=0.05).state == "READY"
    assert states[-1] == "READY"


def test_a_lying_delete_leaves_the_node_and_gone_says_so(cloud_with):
    cloud = cloud_with("lying_delete=1")
    made(cloud)
    cloud.delete_node(ZONE, "tpu-a")  # done, no error
    assert cloud.get_node(ZONE, "tpu-a").state == "READY"
    assert not cloud.node_gone(ZONE, "tpu-a")
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.node_gone(ZONE, "tpu-a")


def test_a_failed_delete_raises_and_leaves_the_node(cloud_with):
    cloud = cloud_with("delete_fail=1")
    made(cloud)
    with pytest.raises(gx.InternalServerError):
        cloud.delete_node(ZONE, "tpu-a")
    assert cloud.get_node(ZONE, "tpu-a").state == "READY"


def test_a_stockout_ends_the_create_with_code_8_and_leaves_nothing(cloud_with):
    cloud = cloud_with(f"stockout={ZONE}")
    operation = cloud.create_node(node())
    with pytest.raises(CreateFailed) as failed:
        cloud.wait_for_node(ZONE, "tpu-a", operation, poll=0.05)
    assert isinstance(failed.value.error, gx.ResourceExhausted)
    assert "no more capacity" in str(failed.value.error)
    assert cloud.node_gone(ZONE, "tpu-a")


def test_a_503_is_retried_on_a_read_and_not_on_a_create(cloud_with):
    cloud = cloud_with("unavailable=1")
    assert cloud.get_node(ZONE, "tpu-a") is None  # the 503 was retried inside
    cloud = cloud_with("unavailable=1")
    with pytest.raises(gx.ServiceUnavailable):
        cloud.create_node(node())
    assert cloud.get_node(ZONE, "tpu-a") is None  # and nothing was made


def test_a_failed_read_raises_and_is_not_taken_for_gone(cloud_with):
    cloud = cloud_with("read_error=1")
    with pytest.raises(gx.InternalServerError):
        cloud.get_node(ZONE, "tpu-a")
    assert cloud.get_node(ZONE, "tpu-a") is None


def test_a_quota_refusal_is_final(cloud_with):
    cloud = cloud_with("quota=1")
    with pytest.raises(gx.ResourceExhausted, match="Quota limit"):
        cloud.create_node(node())


def test_a_zone_the_project_may_not_use_is_listed_and_refuses(cloud_with):
    cloud = cloud_with("")
    assert "europe-west1-b" in cloud.list_zones()
    with pytest.raises(gx.Forbidden, match="not found or access is unauthorized"):
        cloud.list_nodes("europe-west1-b")
    with pytest.raises(gx.NotFound, match="was not found"):
        cloud.list_nodes("us-east9-z")
