"""A kept node that something other than tpuwizard deleted (issue 39, item 11): ``status`` says
so, never drops it without a word, and says what it knows of who (its deadline had passed, so
its watchdog or Google; or it had not, so someone else)."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-central1-a"


@pytest.fixture
def session(monkeypatch) -> Session:
    from tpuwizard.commands import cleanup

    made = Session(practice=True, project="practice-project")
    made.clouds.use(MemoryCloud())
    monkeypatch.setattr(cleanup, "open_session", lambda project, sandbox: made)
    return made


def _kept(session: Session, name: str, deadline: float) -> MemoryCloud:
    cloud = session.cloud_for("tpu-api")
    me = paths.owner_label()
    cloud.create_node(NodeRequest(ZONE, name, parse_accelerator("v5litepod-1"), "run-1", owner=me))
    resource = Resource("node", cloud.project, ZONE, name, "v5litepod-1", "run-1", owner=me)
    session.ledger.record("created", resource)
    session.ledger.record("kept", resource, deadline=deadline, idle_s=None, kept_at=time.time())
    return cloud


@pytest.mark.parametrize(
    ("deadline_in", "who"),
    [
        (3600, "its deadline had not passed, so not its watchdog: someone deleted it by hand"),
        (-60, "its deadline had passed, so its watchdog (or Google) most likely did"),
    ],
)
def test_status_says_a_kept_node_deleted_outside_tpuwizard_is_gone(session, deadline_in, who):
    from tpuwizard.cli import main

    cloud = _kept(session, "dev2", time.time() + deadline_in)
    cloud.delete_node(ZONE, "dev2")  # by hand, by someone else, or by its watchdog
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert "dev2, kept in us-central1-a, is gone, and no tpuwizard command here" in result.stderr
    assert who in result.stderr
    as_json = CliRunner().invoke(main, ["status", "--sandbox", "--json"])
    assert json.loads(as_json.stdout)["kept"] == []
    assert Ledger(session.ledger.path).open_entries() == []  # verified gone by the survey


def test_status_json_lists_the_kept_node_that_went(session):
    from tpuwizard.cli import main

    cloud = _kept(session, "dev2", time.time() + 3600)
    cloud.delete_node(ZONE, "dev2")
    result = CliRunner().invoke(main, ["status", "--sandbox", "--json"])
    assert [k["name"] for k in json.loads(result.stdout)["kept_gone"]] == ["dev2"]
