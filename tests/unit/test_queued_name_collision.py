"""A queued request for a node name someone else holds (issue 39, item 2): deleting the request
never reaches that node.

Google: with ``force`` "all running nodes belonging to this queued resource will be deleted
first" (queuedResources.delete); a node belongs to the request named in its ``queuedResource``.
The sandbox does that (not: the node of the spec's name), tpuwizard sends ``force`` only where
the node of that name is absent or the request's own, and asks whether the name is free before
it queues a request at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import launch
from tests.waiting import wait_until
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.faults import parse_faults
from tpuwizard.sandbox.state import SandboxState

ZONE = "us-central1-a"
PARENT = f"projects/p/locations/{ZONE}"
ALICES = f"{PARENT}/nodes/dev2"
NODE = {"acceleratorType": "v5litepod-4", "runtimeVersion": "v2-alpha-tpuv5-lite"}


def _sandbox(tmp_path: Path, faults: str = "") -> SandboxState:
    return SandboxState(tmp_path / "sandbox", parse_faults(faults), delay=0.0)


def _tick(state: SandboxState) -> None:
    with state.store.transaction():
        state.tick()


def _ask_for_dev2(state: SandboxState, qr_id: str) -> str:
    """Bob's spot request for a node called dev2; its full name."""
    body = {"tpu": {"nodeSpec": [{"parent": PARENT, "nodeId": "dev2", "node": NODE}]}, "spot": {}}
    with state.store.transaction():
        state.queued.create_queued("p", ZONE, qr_id, body, "v2")
    return f"{PARENT}/queuedResources/{qr_id}"


def _state_of(state: SandboxState, name: str) -> str | None:
    _tick(state)
    qr = state.data["queued"].get(name)
    return qr["state"]["state"] if qr else None


def test_a_forced_delete_of_a_request_leaves_the_node_of_its_name_it_did_not_make(tmp_path):
    state = _sandbox(tmp_path)
    with state.store.transaction():
        state.nodes.create_node("p", ZONE, "dev2", dict(NODE, labels={"who": "alice"}), "v2")
    wait_until(lambda: (_tick(state), state.data["nodes"][ALICES]["state"] == "READY")[1], 10)
    bobs = _ask_for_dev2(state, "dev2-qr")
    # Google comes to make the node: the name is taken, so the request fails.
    assert wait_until(lambda: _state_of(state, bobs) == "FAILED", 10)
    with state.store.transaction():
        state.queued.delete_queued("p", ZONE, "dev2-qr", True, "v2")
    wait_until(lambda: _state_of(state, bobs) is None, 30, "the request deleted")
    assert state.data["nodes"][ALICES]["labels"] == {"who": "alice"}  # Alice's, untouched


def test_a_forced_delete_still_takes_the_node_the_request_made(tmp_path):
    state = _sandbox(tmp_path)
    bobs = _ask_for_dev2(state, "dev2-qr")
    assert wait_until(lambda: _state_of(state, bobs) == "ACTIVE", 10)
    assert state.data["nodes"][ALICES]["queuedResource"] == bobs
    with state.store.transaction():
        state.queued.delete_queued("p", ZONE, "dev2-qr", True, "v2")
    wait_until(lambda: _state_of(state, bobs) is None, 30, "the request deleted")
    assert ALICES not in state.data["nodes"]


def test_delete_fail_reaches_a_queued_requests_delete(tmp_path):
    state = _sandbox(tmp_path, "delete_fail=1")
    bobs = _ask_for_dev2(state, "dev2-qr")
    assert wait_until(lambda: _state_of(state, bobs) == "ACTIVE", 10)
    with state.store.transaction():
        op = state.queued.delete_queued("p", ZONE, "dev2-qr", True, "v2")

    def done() -> dict | None:
        _tick(state)
        answer = state.operations.get_operation(op["name"])
        return answer if answer.get("done") else None

    finished = wait_until(done, 30, "the delete operation")
    assert finished["error"]["code"] == 13
    assert _state_of(state, bobs) == "ACTIVE" and ALICES in state.data["nodes"]
    with state.store.transaction():  # the fault is spent: the next delete goes through
        state.queued.delete_queued("p", ZONE, "dev2-qr", True, "v2")
    wait_until(lambda: _state_of(state, bobs) is None, 30, "the request deleted")


def _cloud_deleting(monkeypatch, holder: NodeInfo | None) -> list[bool]:
    """A TpuCloud whose request dev2-qr asks for dev2, held by ``holder``; the force it sends."""
    from tpuwizard.core.cloud.tpu.client import TpuCloud

    cloud = TpuCloud("p", endpoint="http://127.0.0.1:9")
    sent: list[bool] = []
    qr = QueuedInfo("dev2-qr", ZONE, "FAILED", "dev2", "v5litepod-4")
    monkeypatch.setattr(cloud, "get_queued", lambda zone, qr_id: qr)
    monkeypatch.setattr(cloud, "get_node", lambda zone, node_id: holder)
    monkeypatch.setattr(
        cloud.queued_calls,
        "delete_queued",
        lambda zone, qr_id, timeout, force: sent.append(force),
    )
    cloud.delete_queued(ZONE, "dev2-qr")
    return sent


@pytest.mark.parametrize(
    ("requester", "force"),
    [
        (None, False),  # made by hand, or a plain create: not the request's
        (f"{PARENT}/queuedResources/someone-elses-qr", False),
        (f"{PARENT}/queuedResources/dev2-qr", True),
    ],
)
def test_tpuwizard_forces_a_queued_delete_only_over_the_requests_own_node(
    monkeypatch, requester, force
):
    holder = NodeInfo("dev2", ZONE, "v5litepod-4", "READY", queued_resource=requester)
    assert _cloud_deleting(monkeypatch, holder) == [force]


def test_tpuwizard_forces_a_queued_delete_when_no_node_has_the_name(monkeypatch):
    assert _cloud_deleting(monkeypatch, None) == [True]  # one it makes meanwhile is its own


@pytest.mark.parametrize("route", ["spot", "flex"])
def test_a_queued_launch_asks_whether_the_name_is_free_and_touches_nothing(tmp_path, route):
    cloud = MemoryCloud()
    cloud.create_node(
        NodeRequest(ZONE, "tpu-a", parse_accelerator("v5litepod-4"), "alices-run", owner="a11ce")
    )
    out = launch(tmp_path, cloud, route)
    assert out.code == 3
    methods = [c.method for c in cloud.calls]
    assert "create_queued" not in methods and "delete_queued" not in methods
    assert "delete_node" not in methods and (ZONE, "tpu-a") in cloud.nodes
    assert out.ledger.entries() == []  # nothing was asked for, so nothing to record
    failed = [e for e in out.events if type(e).__name__ == "Failed"]
    assert failed and failed[0].diagnosis.title == "The name is already taken"
