"""``status`` asks the session for its kept nodes (``Session.check_kept``): the ledger says
whether any is kept before the kept-node machinery is loaded or any cloud is called."""

from __future__ import annotations

import pytest

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-central1-a"


@pytest.mark.parametrize(
    ("records", "exists", "infos", "gone", "called"),
    [
        ((), False, 0, 0, False),  # an empty ledger: nothing loaded, nothing called
        (("intent", "created"), True, 0, 0, False),  # a launch's node is a leftover, not kept
        (("intent", "created", "kept"), True, 1, 0, True),  # kept and there: its line
        (("intent", "created", "kept"), False, 0, 1, True),  # kept and gone: said gone
        (("intent", "created", "kept", "gone"), False, 0, 0, False),  # verified gone: closed
    ],
)
def test_status_checks_kept_nodes_only_where_the_ledger_keeps_one(
    tmp_path, monkeypatch, records, exists, infos, gone, called
):
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path))
    session = Session(practice=True)
    cloud = MemoryCloud()
    asked: list[str] = []

    def cloud_for(backend: str) -> MemoryCloud:
        asked.append(backend)
        return cloud

    monkeypatch.setattr(session, "cloud_for", cloud_for)
    resource = Resource("node", cloud.project, ZONE, "dev", "v5litepod-1", "run-a")
    if exists:
        cloud.create_node(
            NodeRequest(
                zone=ZONE, node_id="dev", slice=parse_accelerator("v5litepod-1"), run_id="run-a"
            )
        )
    for op in records:
        session.ledger.record(op, resource)
    checked = session.check_kept()
    assert (len(checked.infos), len(checked.gone), bool(asked)) == (infos, gone, called)
