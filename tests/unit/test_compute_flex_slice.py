"""A Flex-start multi-host slice on Compute Engine (bulk mode): every part's body is one Google
takes (compute.v1.json), the template carries FLEX_START with its deadline and no ``params``, and
the BULK MIG's wait for capacity is tpuwizard's own --queue-wait, against the in-memory clients
(fake_compute_graph.py) with the clock injected."""

from __future__ import annotations

import dataclasses
import itertools
import json
from importlib import resources

import pytest

from tests.integration.discovery import errors
from tests.unit.fake_compute_graph import FakeGraph, FakeReads
from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.slices import ComputeSlices
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed, QueueExpired
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE, NAME = "us-east5-a", "tpuwizard-r1"


def request(route: str = "flex", accelerator: str = "v6e-16", wait: float | None = 600):
    return NodeRequest(
        zone=ZONE,
        node_id=NAME,
        slice=parse_accelerator(accelerator),
        run_id="r1",
        owner="me",
        max_run_s=3600,
        metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAA"},
        route=route,
        spot=route == "spot",
        queue_wait_s=wait if route == "flex" else None,
    )


def compute_doc() -> dict:
    folder = resources.files("googleapiclient.discovery_cache").joinpath("documents")
    return json.loads(folder.joinpath("compute.v1.json").read_text("utf-8"))


@pytest.mark.parametrize("route", ["vm", "spot", "flex"])
@pytest.mark.parametrize("accelerator", ["v6e-16", "v5p-16", "tpu7x-16"])
def test_every_part_s_body_is_one_compute_v1_json_takes(route, accelerator):
    doc, req = compute_doc(), request(route, accelerator)
    for schema, sent in (
        ("ResourcePolicy", body.policy_body(req)),
        ("InstanceTemplate", body.template_body(req)),
        ("InstanceGroupManager", body.mig_body(req, "p")),
    ):
        assert errors(doc, {"$ref": schema}, sent) == [], schema


def test_the_flex_template_carries_flex_start_its_deadline_and_delete_and_no_params():
    properties = body.template_body(request())["properties"]
    assert "params" not in properties  # not a field of InstanceProperties (v1, beta, alpha)
    assert properties["scheduling"]["provisioningModel"] == "FLEX_START"
    assert properties["scheduling"]["maxRunDuration"] == {"seconds": "3600"}
    assert properties["scheduling"]["instanceTerminationAction"] == "DELETE"
    assert properties["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    mig = body.mig_body(request(), "p")
    assert mig["targetSize"] == 0 and mig["targetSizePolicy"] == {"mode": "BULK"}


class Clock:
    """A clock the test moves: each read is ``step`` seconds after the one before."""

    def __init__(self, step: float) -> None:
        self.ticks = itertools.count()
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        self.now = next(self.ticks) * self.step
        return self.now


def waiting_slice(clock: Clock, wait: float | None = 600):
    from google.cloud import compute_v1

    graph = FakeGraph(waiting=True)
    s = ComputeSlices(
        compute_v1, "p", graph.client, 30.0, None, clock=clock, reads=FakeReads(graph)
    )
    return graph, s, s.create(request(wait=wait), lambda part: None)


def test_a_flex_slice_waits_out_no_capacity_until_its_queue_wait_then_expires():
    clock, seen = Clock(step=30.0), list[str]()
    graph, s, build = waiting_slice(clock)
    with pytest.raises(QueueExpired) as err:
        s.wait(ZONE, NAME, build, seen.append, timeout=30, poll=0.001, cancelled=None)
    # The queue wait, no sooner.
    waited = err.value.waited_s
    assert waited is not None and 600 <= waited < 700 and clock.now >= 600
    assert "--queue-wait" in (err.value.bound or "") and err.value.route == "flex"
    assert "RESIZING" in seen and "PROVISIONING" in seen  # waited, not failed at once
    d = diagnose(
        err.value,
        Context(
            zone=ZONE, accelerator="v6e-16", slice=catalog.parse_accelerator("v6e-16"), route="flex"
        ),
    )
    assert d.kind == "stockout" and "--queue-wait of 10 min" in d.explanation
    s.delete(ZONE, NAME, timeout=5)  # what the launch does next: every part, verified
    assert s.read.gone(ZONE, NAME) and not (graph.migs or graph.templates or graph.policies)


def test_the_queue_wait_starts_at_the_resize_and_is_at_least_google_s_least():
    # A probe (0) waits the least a Flex-start wait may be on Compute Engine, 90 s.
    clock = Clock(step=10.0)
    _, s, build = waiting_slice(clock, wait=0)
    with pytest.raises(QueueExpired) as err:
        s.wait(ZONE, NAME, build, None, timeout=30, poll=0.001, cancelled=None)
    assert err.value.waited_s is not None and 90 <= err.value.waited_s < 110


def test_a_slice_on_demand_with_no_capacity_fails_at_once_not_after_a_queue_wait():
    from google.cloud import compute_v1

    graph = FakeGraph(waiting=True)
    clock = Clock(step=1.0)
    s = ComputeSlices(
        compute_v1, "p", graph.client, 30.0, None, clock=clock, reads=FakeReads(graph)
    )
    build = s.create(dataclasses.replace(request("vm")), lambda part: None)
    with pytest.raises(CreateFailed) as err:
        s.wait(ZONE, NAME, build, None, timeout=30, poll=0.001, cancelled=None)
    assert not isinstance(err.value, QueueExpired) and clock.now < 60
