"""A Flex-start VM on Compute Engine that Google leaves PENDING: tpuwizard waits its queue wait
(``requestValidForDuration``, Google's own deadline for the request) plus 5 minutes, then gives
up (QueueExpired, which the launch answers by deleting the VM and verifying it gone), never
until --ready-timeout. The clock is the test's."""

from __future__ import annotations

import itertools
import json

import pytest

from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.compute.flex import GRACE_S
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import QueueExpired
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE, NAME = "us-east5-a", "tpu-flex"


class Clock:
    def __init__(self, step: float) -> None:
        self.ticks, self.step, self.now = itertools.count(), step, 0.0

    def __call__(self) -> float:
        self.now = next(self.ticks) * self.step
        return self.now


def cloud_with(states: list[str], clock: Clock, route: str = "flex", wait: float = 600):
    """A ComputeCloud whose instance reads answer ``states`` in turn (the last one for ever)."""
    from google.cloud import compute_v1

    cloud = ComputeCloud("p", endpoint="http://127.0.0.1:1")
    cloud.clock = clock
    cloud.instances.insert_unary = lambda **kw: compute_v1.Operation(name="op-1")  # type: ignore[method-assign]
    cloud._get_raw = lambda zone, name: compute_v1.Instance(name=name)  # type: ignore[method-assign]
    read = iter(states)

    def node(zone: str, name: str) -> NodeInfo:
        return NodeInfo(name, zone, "v6e-4", next(read, states[-1]), {})

    cloud.get_node = node  # type: ignore[method-assign]
    req = NodeRequest(
        zone=ZONE,
        node_id=NAME,
        slice=parse_accelerator("v6e-4"),
        run_id="r1",
        max_run_s=3600,
        route=route,
        spot=route == "spot",
        queue_wait_s=wait if route == "flex" else None,
    )
    cloud.create_node(req)
    return cloud


def test_a_vm_pending_past_its_queue_wait_and_five_minutes_is_given_up():
    clock, seen = Clock(step=20.0), list[str]()
    cloud = cloud_with(["PENDING"], clock)
    with pytest.raises(QueueExpired) as err:
        cloud.wait_for_node(ZONE, NAME, None, seen.append, timeout=30, poll=0.001)
    # Not before, not much after.
    waited = err.value.waited_s
    assert waited is not None and 600 + GRACE_S <= waited < 600 + GRACE_S + 40
    assert err.value.state == "PENDING" and seen == ["PENDING"]
    d = diagnose(
        err.value,
        Context(
            zone=ZONE, accelerator="v6e-4", slice=catalog.parse_accelerator("v6e-4"), route="flex"
        ),
    )
    assert d.kind == "stockout"
    assert "requestValidForDuration of 10 min" in d.explanation
    assert "5 min after it" in d.explanation


def test_a_vm_granted_before_the_limit_is_waited_on_until_it_runs():
    clock = Clock(step=100.0)  # the limit (900 s) passes while it is PROVISIONING: no matter
    states = ["PENDING"] * 5 + ["PROVISIONING"] * 10 + ["RUNNING"]
    node = cloud_with(states, clock).wait_for_node(ZONE, NAME, None, None, timeout=30, poll=0.001)
    assert node.state == "RUNNING"


def test_only_flex_start_has_the_limit():
    clock = Clock(step=1000.0)
    cloud = cloud_with(["PENDING"] * 20 + ["RUNNING"], clock, route="spot")
    assert cloud.wait_for_node(ZONE, NAME, None, None, timeout=30, poll=0.001).state == "RUNNING"


def test_the_queue_wait_help_says_the_five_minutes():
    from tpuwizard.commands.common import queue_wait_option

    @queue_wait_option
    def command(queue_wait: float | None) -> None: ...

    text = " ".join(json.dumps(command.__click_params__[0].help).split())
    assert f"{GRACE_S / 60:g} minutes after the queue wait" in text
