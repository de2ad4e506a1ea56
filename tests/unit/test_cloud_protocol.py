"""The lifecycle, teardown and status talk to the ``Cloud`` protocol: TpuCloud and the tests'
in-memory clouds implement every member, and what a cloud says (a node's identity, what its
states bill, which delete refusals are only for now) is what the lifecycle acts on."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from google.api_core import exceptions as gx

from tests import fakes
from tests.fakes import MemoryCloud, foreign_node
from tests.unit.test_launch_safety import ZONE, launch
from tpuwizard.core.cloud.protocol import Cloud, NodeIdentity
from tpuwizard.core.cloud.tpu import client
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ownership import CREATED_KEY, UID_KEY
from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile
from tpuwizard.core.plan.catalog import parse_accelerator

MEMBERS = sorted(
    name for name, value in vars(Cloud).items() if callable(value) and not name.startswith("_")
)


def test_the_protocol_names_what_the_lifecycle_calls():
    assert {"create_node", "wait_for_queued", "node_gone", "bills_in_state", "identity_of"} <= (
        set(MEMBERS)
    )


def parameters(function: Callable[..., object]) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("implementation", [TpuCloud, MemoryCloud])
def test_every_member_is_implemented_with_the_protocol_s_parameters(implementation):
    for name in MEMBERS:
        method = getattr(implementation, name, None)
        assert callable(method), f"{implementation.__name__} lacks {name}"
        # The same names, kinds and defaults: a caller written to the protocol works with both.
        assert parameters(method) == parameters(getattr(Cloud, name)), name
    assert "project" in inspect.signature(implementation).parameters


def test_the_in_memory_cloud_is_its_own_implementation_not_the_client_s():
    # Its waits and "gone" checks are its own, so the lifecycle's tests check the protocol's
    # promises rather than TpuCloud's code twice.
    assert not issubclass(MemoryCloud, TpuCloud)
    assert not any(getattr(v, "__module__", "") == client.__name__ for v in vars(fakes).values())


@dataclass
class RenumberingCloud(MemoryCloud):
    """A cloud whose server-side identity is not in the node's fields: only it can say."""

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        return NodeIdentity(f"uid-of-{node.name}", 1234.5)


def records(ledger: Ledger) -> list[dict[str, object]]:
    """Every line of the ledger, not only each instance's latest."""
    return [json.loads(line) for line in ledger.path.read_text().splitlines()]


def test_the_identity_recorded_at_ready_is_the_one_the_cloud_gives(tmp_path):
    outcome = launch(tmp_path, RenumberingCloud())
    pinned = [(r[UID_KEY], r[CREATED_KEY]) for r in records(outcome.ledger) if UID_KEY in r]
    assert pinned == [("uid-of-tpu-a", 1234.5)]


@dataclass
class FreeWhileReadyCloud(MemoryCloud):
    """A cloud whose READY nodes cost nothing (another backend's billing rule)."""

    def bills_in_state(self, kind: str, state: str) -> bool:
        return state != "READY"


def test_status_prices_by_the_cloud_s_own_billing_rule(tmp_path):
    resource = Resource("node", "practice-project", ZONE, "tpu-a", "v5litepod-1", "run-1")
    for cloud, expect_free in ((MemoryCloud(), False), (FreeWhileReadyCloud(), True)):
        ledger = Ledger(tmp_path / f"{type(cloud).__name__}.jsonl")
        cloud.create_node(
            NodeRequest(
                zone=ZONE, node_id="tpu-a", slice=parse_accelerator("v5litepod-1"), run_id="run-1"
            )
        )
        ledger.record("created", resource)
        [found] = reconcile(cloud, ledger, zones=[ZONE])
        assert found.state == "READY" and found.billing is not expect_free
        assert (found.cost_usd == 0.0) if expect_free else found.cost_usd is not None


@dataclass
class BusyCloud(MemoryCloud):
    """Refuses the first delete with an error only this cloud knows means "not yet"."""

    refusals: int = 1

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        if self.refusals:
            self.refusals -= 1
            raise gx.BadRequest("operation in progress on this resource")
        super().delete_node(zone, node_id, timeout)

    def not_deletable_yet(self, err: BaseException) -> bool:
        return "operation in progress" in str(err)


def test_a_delete_refused_for_now_by_the_cloud_s_words_is_asked_again(tmp_path):
    from tpuwizard.core.cloud.types import RUN_LABEL

    cloud = BusyCloud()
    cloud.add(foreign_node(ZONE, "tpu-a", {RUN_LABEL: "run-1"}))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    resource = Resource("node", "p", ZONE, "tpu-a", "v5litepod-4", "run-1")
    result = delete_and_verify(cloud, ledger, resource, attempts=1, pause=0)
    assert result.verified and cloud.refusals == 0
    assert [r["op"] for r in records(ledger)] == ["delete_pending", "gone"]


# -- the in-memory cloud keeps the promises as Google does (google-behaviour.md) -------------
def node_request(name: str = "tpu-a", spot: bool = False) -> NodeRequest:
    return NodeRequest(ZONE, name, parse_accelerator("v5litepod-4"), "run-1", spot=spot)


def test_a_node_is_creating_until_it_is_provisioned_then_ready():
    cloud = MemoryCloud(delay=0.5)  # long enough for the get right after the create
    operation = cloud.create_node(node_request())
    creating = cloud.get_node(ZONE, "tpu-a")
    assert creating is not None and creating.state == "CREATING"
    states: list[str] = []
    node = cloud.wait_for_node(ZONE, "tpu-a", operation, states.append, poll=0.01)
    assert node.state == "READY" and states == ["CREATING", "READY"]
    made = cloud.created[0]
    assert isinstance(made, NodeInfo) and cloud.identity_of(node).uid == made.uid != ""


def test_a_delete_while_the_node_is_being_made_is_refused_for_now():
    cloud = MemoryCloud(delay=30)
    cloud.create_node(node_request())
    with pytest.raises(gx.BadRequest) as refused:
        cloud.delete_node(ZONE, "tpu-a")
    assert cloud.not_deletable_yet(refused.value)
    assert cloud.get_node(ZONE, "tpu-a") is not None


def test_not_found_by_get_is_not_gone_while_the_list_holds_it():
    cloud = MemoryCloud.faulty("listed_after_delete=1")
    cloud.create_node(node_request())
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.get_node(ZONE, "tpu-a") is None
    assert [n.state for n in cloud.list_nodes(ZONE)] == ["DELETING"]
    assert not cloud.node_gone(ZONE, "tpu-a")
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.node_gone(ZONE, "tpu-a")


def test_a_node_that_never_gets_ready_times_out_creating():
    from tpuwizard.core.errors import WaitTimedOut

    cloud = MemoryCloud.faulty("never_ready=1")
    operation = cloud.create_node(node_request())
    with pytest.raises(WaitTimedOut) as caught:
        cloud.wait_for_node(ZONE, "tpu-a", operation, timeout=0.05, poll=0.01)
    assert caught.value.state == "CREATING"


def test_a_spot_node_is_preempted_and_the_wait_says_so():
    from tpuwizard.core.errors import CreateFailed

    cloud = MemoryCloud.faulty("preempt_after=0")
    cloud.create_node(node_request(spot=True))
    with pytest.raises(CreateFailed, match="PREEMPTED"):
        cloud.wait_for_node(ZONE, "tpu-a", None, poll=0.01)


def test_a_queued_request_waits_for_capacity_and_its_wait_runs_out_as_a_queue_expiry():
    from tpuwizard.core.errors import QueueExpired

    cloud = MemoryCloud.faulty(f"stockout={ZONE}")
    cloud.create_queued(node_request(), "tpu-a-qr", "spot")
    with pytest.raises(QueueExpired) as caught:
        cloud.wait_for_queued(ZONE, "tpu-a-qr", timeout=0.05, poll=0.01)
    assert caught.value.state == "WAITING_FOR_RESOURCES" and caught.value.route == "spot"
    assert cloud.get_node(ZONE, "tpu-a") is None  # no capacity, no node


def test_a_queued_request_for_a_taken_node_name_fails_and_leaves_that_node():
    from tpuwizard.core.errors import CreateFailed

    cloud = MemoryCloud()
    theirs = foreign_node(ZONE, "tpu-a", {})
    cloud.add(theirs)
    cloud.create_queued(node_request(), "tpu-a-qr", "spot")
    with pytest.raises(CreateFailed):
        cloud.wait_for_queued(ZONE, "tpu-a-qr", poll=0.01)
    failed = cloud.get_queued(ZONE, "tpu-a-qr")
    assert failed is not None and failed.state == "FAILED"
    cloud.delete_queued(ZONE, "tpu-a-qr")
    assert cloud.nodes[(ZONE, "tpu-a")] is theirs  # not the request's node: it stays


def test_a_kept_flex_start_node_shows_the_deadline_the_cloud_reports(tmp_path):
    """status reads Flex-start's end back from the cloud: it, not our record, ends the node."""
    import time
    from types import SimpleNamespace

    from tpuwizard.session.kept.nodes import KeptNodes

    cloud = MemoryCloud()
    zone = cloud.list_zones()[0]
    req = NodeRequest(
        zone=zone, node_id="flex-node", slice=parse_accelerator("v5litepod-1"), run_id="r"
    )
    cloud.create_queued(req, "flex-qr", "flex", max_run_seconds=600)
    cloud.wait_for_queued(zone, "flex-qr", poll=0.01)
    ends = cloud.deadline_at("queued", zone, "flex-qr")
    assert ends is not None and ends > time.time() + 590
    ledger = Ledger(tmp_path / "ledger.jsonl")
    r = Resource("queued", cloud.project, zone, "flex-qr", "v5litepod-1", "r", "flex", "flex-node")
    ledger.record("kept", r, deadline=ends - 300.0, kept_at=time.time())  # a stale record
    session = SimpleNamespace(
        cloud=cloud, cloud_for=lambda backend: cloud, ledger=ledger, practice=True
    )
    (info,) = KeptNodes(session).check().infos  # type: ignore[arg-type]
    assert info.max_deadline == ends


def test_teardown_verifies_every_part_the_cloud_names_before_it_says_gone(tmp_path):
    """A resource made of parts (a queued request and its node; a MIG with its VMs on Compute
    Engine) is gone only when every part the cloud names is: here a part still there."""
    from tpuwizard.core.cloud.protocol import Part

    class WithAPartLeft(MemoryCloud):
        def parts_of(self, kind, zone, name, node_id, accelerator=None):
            return [*super().parts_of(kind, zone, name, node_id), Part("node", zone, "left")]

    cloud = WithAPartLeft()
    zone = cloud.list_zones()[0]
    ledger = Ledger(tmp_path / "ledger.jsonl")
    for name, run in (("tpu-a", "run-1"), ("left", "run-1")):  # the part carries our labels
        cloud.create_node(
            NodeRequest(zone=zone, node_id=name, slice=parse_accelerator("v5litepod-1"), run_id=run)
        )
    resource = Resource("node", cloud.project, zone, "tpu-a", "v5litepod-1", "run-1")
    ledger.record("created", resource)
    result = delete_and_verify(cloud, ledger, resource, attempts=1, pause=0.0)
    assert not result.verified
    assert Ledger(ledger.path).entries()[-1].op != "gone"


def test_status_carries_the_parts_a_cloud_reads_with_a_node_from_the_ledger_and_labels(tmp_path):
    from dataclasses import replace

    parts = ("MIG", "4 VMs", "template", "policy")
    cloud = MemoryCloud()
    for name in ("tpu-ledger", "tpu-labels"):
        cloud.create_node(
            NodeRequest(
                zone=ZONE, node_id=name, slice=parse_accelerator("v5litepod-1"), run_id="run-1"
            )
        )
        cloud.nodes[(ZONE, name)] = replace(cloud.nodes[(ZONE, name)], parts=parts)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.record(
        "created", Resource("node", cloud.project, ZONE, "tpu-ledger", "v5litepod-1", "run-1")
    )
    found = reconcile(cloud, ledger, zones=[ZONE], owner=None)
    shown = {b.resource.name: b.parts for b in [*found, *found.others]}
    assert shown == {"tpu-ledger": parts, "tpu-labels": parts}
