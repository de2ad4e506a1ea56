"""The lifecycle, teardown and status talk to the ``Cloud`` protocol: TpuCloud and the tests'
in-memory clouds implement every member, and what a cloud says (a node's identity, what its
states bill, which delete refusals are only for now) is what the lifecycle acts on."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass

import pytest
from google.api_core import exceptions as gx

from tests.fakes import FakeCloud
from tests.unit.fake_cloud import FakeCloud as MemoryCloud
from tests.unit.test_launch_safety import ZONE, launch
from tpuwizard.core.cloud.client import TpuCloud
from tpuwizard.core.cloud.protocol import Cloud, NodeIdentity
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.launch.ledger import Ledger, Resource
from tpuwizard.core.launch.ownership import CREATED_KEY, UID_KEY
from tpuwizard.core.launch.teardown import delete_and_verify, reconcile

MEMBERS = sorted(
    name for name, value in vars(Cloud).items() if callable(value) and not name.startswith("_")
)


def test_the_protocol_names_what_the_lifecycle_calls():
    assert {"create_node", "wait_for_queued", "node_gone", "bills_in_state", "identity_of"} <= (
        set(MEMBERS)
    )


@pytest.mark.parametrize("implementation", [TpuCloud, FakeCloud, MemoryCloud])
def test_every_member_is_implemented_and_takes_the_protocol_s_parameters(implementation):
    for name in MEMBERS:
        method = getattr(implementation, name, None)
        assert callable(method), f"{implementation.__name__} lacks {name}"
        wanted = [p for p in inspect.signature(getattr(Cloud, name)).parameters if p != "self"]
        # Every parameter the protocol names can be passed by that name.
        inspect.signature(method).bind(None, **dict.fromkeys(wanted))
    assert "project" in inspect.signature(implementation).parameters


@dataclass
class RenumberingCloud(FakeCloud):
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
class FreeWhileReadyCloud(FakeCloud):
    """A cloud whose READY nodes cost nothing (another backend's billing rule)."""

    def bills_in_state(self, kind: str, state: str) -> bool:
        return state != "READY"


def test_status_prices_by_the_cloud_s_own_billing_rule(tmp_path):
    resource = Resource("node", "practice-project", ZONE, "tpu-a", "v5litepod-1", "run-1")
    for cloud, expect_free in ((FakeCloud(), False), (FreeWhileReadyCloud(), True)):
        ledger = Ledger(tmp_path / f"{type(cloud).__name__}.jsonl")
        cloud.create_node(
            NodeRequest(zone=ZONE, node_id="tpu-a", accelerator_type="v5litepod-1", run_id="run-1")
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
    from tests.unit.fake_cloud import Item
    from tpuwizard.core.cloud.types import RUN_LABEL

    cloud = BusyCloud()
    cloud.add(Item("node", ZONE, "tpu-a", {RUN_LABEL: "run-1"}))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    resource = Resource("node", "p", ZONE, "tpu-a", "v5litepod-4", "run-1")
    result = delete_and_verify(cloud, ledger, resource, attempts=1, pause=0)
    assert result.verified and cloud.refusals == 0
    assert [r["op"] for r in records(ledger)] == ["delete_pending", "gone"]
