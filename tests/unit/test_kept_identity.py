"""A kept node is addressed by identity, not name: Alice's `run`, `ssh` and `watch` never touch
Bob's node that took the name after hers was deleted (issue "Every path keeps the promise", 6)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ownership import identity, not_the_recorded_node
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.kept.nodes import KeptNodes

ZONE = "us-central1-a"
ALICE, BOB = "owner-alice", "owner-bob"


def kept_by_alice(tmp_path):
    cloud = MemoryCloud()
    ledger = Ledger(tmp_path / "ledger.jsonl")
    resource = Resource("node", cloud.project, ZONE, "dev", "v5litepod-1", "run-a", owner=ALICE)
    cloud.create_node(
        NodeRequest(
            zone=ZONE,
            node_id="dev",
            slice=parse_accelerator("v5litepod-1"),
            run_id="run-a",
            owner=ALICE,
        )
    )
    cloud.nodes[(ZONE, "dev")] = replace(cloud.nodes[(ZONE, "dev")], uid="111", create_time=100.0)
    ledger.record("intent", resource)
    ledger.record("created", resource, **identity("111", 100.0))
    ledger.record("kept", resource, deadline=None, idle_s=None, kept_at=101.0)
    session = SimpleNamespace(
        cloud=cloud, cloud_for=lambda backend: cloud, ledger=ledger, practice=True, owner=ALICE
    )
    return cloud, ledger, session


def test_the_recorded_node_is_the_one_opened(tmp_path, monkeypatch):
    cloud, _ledger, session = kept_by_alice(tmp_path)
    nodes = KeptNodes(session)  # type: ignore[arg-type]
    (entry,) = nodes.entries()
    node = cloud.nodes[(ZONE, "dev")]
    assert not_the_recorded_node(entry.resource, entry.extra, node.labels, "111", 100.0) is None


@pytest.mark.parametrize(
    ("owner", "run_id", "uid", "words"),
    [
        (BOB, "run-b", "222", "belongs to owner owner-bob, tpuwizard run run-b"),  # Bob's own dev
        (ALICE, "run-a", "333", "created again since"),  # same labels, another instance
    ],
)
def test_a_node_that_took_the_name_is_refused_and_ours_recorded_gone(
    tmp_path, owner, run_id, uid, words
):
    cloud, ledger, session = kept_by_alice(tmp_path)
    del cloud.nodes[(ZONE, "dev")]  # Alice's dev is deleted (its idle deadline)...
    cloud.create_node(  # ...and someone makes a dev of their own
        NodeRequest(
            zone=ZONE,
            node_id="dev",
            slice=parse_accelerator("v5litepod-1"),
            run_id=run_id,
            owner=owner,
        )
    )
    cloud.nodes[(ZONE, "dev")] = replace(cloud.nodes[(ZONE, "dev")], uid=uid, create_time=500.0)
    with pytest.raises(BadInput) as refused:
        KeptNodes(session).open("dev")  # type: ignore[arg-type]
    assert "dev in us-central1-a is not the node you kept" in str(refused.value)
    assert words in str(refused.value)
    assert [e.op for e in Ledger(ledger.path).entries()] == ["gone"]
    assert (ZONE, "dev") in cloud.nodes and cloud.count("delete_node") == 0  # left alone


def test_a_name_kept_again_after_its_node_was_deleted_names_one_kept_node(tmp_path, monkeypatch):
    import tpuwizard.session.kept.nodes as kept_module

    cloud, ledger, session = kept_by_alice(tmp_path)
    del cloud.nodes[(ZONE, "dev")]  # the idle watchdog deleted Alice's dev...
    again = Resource("node", cloud.project, ZONE, "dev", "v5litepod-1", "run-b", owner=ALICE)
    cloud.create_node(  # ...and `up --name dev` made and kept a new one
        NodeRequest(
            zone=ZONE,
            node_id="dev",
            slice=parse_accelerator("v5litepod-1"),
            run_id="run-b",
            owner=ALICE,
        )
    )
    for op in ("intent", "created", "kept"):
        ledger.record(op, again)
    monkeypatch.setattr(kept_module, "KeptNode", lambda nodes, entry, node: entry)
    opened = KeptNodes(session).open("dev")  # type: ignore[arg-type]
    assert opened.resource.run_id == "run-b"
    assert [(e.resource.run_id, e.op) for e in Ledger(ledger.path).entries()] == [
        ("run-a", "gone"),
        ("run-b", "kept"),
    ]
    assert KeptNodes(session).open(None).resource.run_id == "run-b"  # type: ignore[arg-type]
    assert (ZONE, "dev") in cloud.nodes and cloud.count("delete_node") == 0
