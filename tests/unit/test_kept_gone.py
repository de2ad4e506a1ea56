"""A kept node that something other than tpuwizard deleted (issue 39, item 11): ``status`` says
so, never drops it without a word, and says what it knows of who: the limit whose time had come
(issue 52, item 2), else outside tpuwizard; and it closes the node's run folder."""

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


def _kept(session: Session, name: str, deadline: float, **fields) -> MemoryCloud:
    cloud = session.cloud_for("tpu-api")
    me = paths.owner_label()
    cloud.create_node(NodeRequest(ZONE, name, parse_accelerator("v5litepod-1"), "run-1", owner=me))
    resource = Resource("node", cloud.project, ZONE, name, "v5litepod-1", "run-1", owner=me)
    session.ledger.record("created", resource)
    kept = {"idle_s": None, "kept_at": time.time(), **fields}
    session.ledger.record("kept", resource, deadline=deadline, **kept)
    return cloud


@pytest.mark.parametrize(
    ("deadline_in", "who"),
    [
        (3600, "deleted outside tpuwizard (or by Google)"),
        (-60, "its --max-run deadline at "),
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


def test_status_closes_the_run_folder_of_a_kept_node_its_watchdog_deleted(session, tmp_path):
    """Newcomer round 6, D1: `up --idle 0.2`, a minute, `status`: the folder closed, the reason
    the idle limit (the 120-minute deadline had not come)."""
    from tpuwizard.cli import main

    kept_at = time.time() - 60
    folder = tmp_path / "runs" / "run-1"
    folder.mkdir(parents=True)
    spent = {"seconds": 3.0, "price_per_hour_usd": 1.2, "cost_usd": 0.001, "as_of": kept_at}
    (folder / "cost.json").write_text(json.dumps({**spent, "still_running": True}))
    outcome = {"exit_code": 0, "verified_gone": [], "still_existing": ["dev2"], "kept": ["dev2"]}
    (folder / "outcome.json").write_text(json.dumps(outcome))
    cloud = _kept(
        session, "dev2", kept_at + 7200, idle_s=12.0, kept_at=kept_at, run_dir=str(folder)
    )
    cloud.delete_node(ZONE, "dev2")  # its watchdog, 12 s after the keep
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert "its watchdog, after 0.2 minutes without a run" in result.stderr
    assert "deadline" not in result.stderr
    cost = json.loads((folder / "cost.json").read_text())
    assert cost["still_running"] is False and cost["last_seen_present_at"] == kept_at
    assert kept_at + 60 <= cost["verified_gone_at"] <= time.time()
    assert 62 <= cost["seconds"] <= 3.0 + time.time() - kept_at  # counted up to seen gone
    ended = json.loads((folder / "outcome.json").read_text())
    assert ended["still_existing"] == [] and ended["verified_gone"] == ["dev2"]
    how = ended["kept_gone"]["dev2"]
    assert how["reason"] == "idle" and how["seen_by"] == "status"
    assert how["last_seen_present_at"] == kept_at
    assert how["limit_passed_at"] == kept_at + 12.0  # the idle limit, 12 s after the keep
    again = CliRunner().invoke(main, ["status", "--sandbox"])  # the first to see it closed it
    assert again.exit_code == 0 and "dev2" not in again.stderr
    assert json.loads((folder / "cost.json").read_text()) == cost
