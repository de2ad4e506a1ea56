"""TPU7x on Compute Engine in the sandbox (issue 33): a tpu7x-standard-4t VM is made, reaches
RUNNING and is deleted; a project without TPU7x access (the fault no_tpu7x_access, whose 403 is
unconfirmed) is refused and diagnosed by the code, whatever the words."""

from __future__ import annotations

__all__ = ["compute"]  # the fixture, shared with test_compute_cloud

import pytest
from google.api_core import exceptions as gx

from tests.integration.test_compute_cloud import compute, ctx, launched, request
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.diagnose.tpu7x_access import ACCESS_PAGE
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE7 = "us-central1-c"


def tpu7x(route: str = "vm"):
    return request(route, zone=ZONE7, slice=parse_accelerator("tpu7x-8"))


def test_a_tpu7x_vm_is_made_runs_and_is_deleted(compute):
    cloud = compute(delay=0.05)
    seen, node = launched(cloud, tpu7x())
    assert seen[-1] == "RUNNING" and node.accelerator_type == "tpu7x-8"
    sent = cloud.instances.get(project="practice-project", zone=ZONE7, instance="tpu-a")
    assert sent.machine_type.endswith("/tpu7x-standard-4t")
    cloud.delete_node(ZONE7, "tpu-a")
    assert cloud.node_gone(ZONE7, "tpu-a")


def test_a_project_without_tpu7x_access_is_refused_and_told_to_ask_the_account_team(compute):
    cloud = compute("no_tpu7x_access=1", delay=0.05)
    req = tpu7x()
    with pytest.raises(gx.Forbidden) as refused:  # the insert itself is refused
        cloud.create_node(req)
    d = diagnose(refused.value, ctx(req))
    assert d.kind == "tpu7x_access" and "403" in d.title
    assert "unconfirmed" in d.explanation and ACCESS_PAGE in " ".join(map(str, d.next_steps))
    assert cloud.node_gone(ZONE7, "tpu-a")
    # Other generations are not touched by the fault.
    _, node = launched(cloud, request(name="v6e-a"))
    assert node.accelerator_type == "v6e-4"
