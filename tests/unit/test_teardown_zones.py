"""`status`, `teardown --all`, `run` and `down` survive a zone that refuses and a kept node that
Google preempted (issue 22, items 3 and 4), with the in-memory cloud behind the real CLI."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.commands import cleanup as cleanup_commands
from tpuwizard.commands import iterate as iterate_commands
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.google import FORBIDDEN_ZONES
from tpuwizard.session.kept.lines import KeptInfo
from tpuwizard.session.session import Session
from tpuwizard.words.kept_end import kept_info_line

ZONE, (BAD,) = "us-central1-a", FORBIDDEN_ZONES  # listed, and refused with 403


@pytest.fixture
def session(monkeypatch) -> Session:
    s = Session(practice=True, project="practice-project")
    s.clouds.use(MemoryCloud())
    for commands in (cleanup_commands, iterate_commands):
        monkeypatch.setattr(commands, "open_session", lambda project, sandbox: s)
    return s


def node(session: Session, name: str, zone: str = ZONE, run_id: str = "run-1") -> Resource:
    """A node this install made, recorded; in a refusing zone only the record exists."""
    me = paths.owner_label()
    if zone != BAD:
        session.cloud.create_node(
            NodeRequest(zone, name, parse_accelerator("v5litepod-1"), run_id, owner=me)
        )
    resource = Resource("node", session.cloud.project, zone, name, "v5litepod-1", run_id, owner=me)
    session.ledger.record("created", resource)
    return resource


def ops(session: Session, name: str) -> list[str]:
    return [e.op for e in Ledger(session.ledger.path).entries() if e.resource.name == name]


def invoke(*args: str):
    return CliRunner().invoke(main, [*args, "--sandbox"])


# -- item 3: one zone's error is its own line; everything else is still listed and deleted ----
def test_status_lists_every_other_zone_then_says_the_one_it_could_not_check(session):
    node(session, "mine")
    node(session, "lost", zone=BAD, run_id="run-2")
    result = invoke("status")
    assert result.exit_code == 3, result.output  # something could not be checked
    assert "mine" in result.stdout and "READY" in result.stdout
    said = result.stderr
    assert f"Could not check lost in {BAD}: {BAD} is not available to your project" in said
    assert "it may still exist (practice: not billed)" in said  # practice bills nothing
    assert f"gcloud compute tpus tpu-vm list --zone {BAD} --project practice-project" in said
    assert "unexpected error" not in result.output


def test_status_json_still_prints_its_document_with_what_it_could_not_check(session):
    node(session, "mine")
    node(session, "lost", zone=BAD, run_id="run-2")
    result = invoke("status", "--json")
    assert result.exit_code == 3, result.output
    doc = json.loads(result.stdout)
    assert [r["name"] for r in doc["resources"]] == ["mine"]
    (unchecked,) = doc["unchecked"]
    assert (unchecked["name"], unchecked["zone"]) == ("lost", BAD)
    assert unchecked["diagnosis"]["kind"] == "zone_unavailable"


def test_teardown_all_deletes_what_it_can_and_exits_4_for_what_it_could_not_check(session):
    node(session, "mine")
    node(session, "lost", zone=BAD, run_id="run-2")
    result = invoke("teardown", "--all", "--yes", "--json")
    assert result.exit_code == 4, result.output
    assert (ZONE, "mine") not in session.cloud.nodes and ops(session, "mine")[-1] == "gone"
    assert ops(session, "lost") == ["created"]  # not checked, so not recorded gone
    doc = json.loads(result.stdout)
    assert [(r["name"], r["verified"]) for r in doc["results"]] == [("mine", True)]
    assert [(u["name"], u["zone"]) for u in doc["unchecked"]] == [("lost", BAD)]
    assert f"Could not check lost in {BAD}" in result.stderr
    assert "verified gone: mine" in result.stderr


def test_teardown_all_with_nothing_else_still_says_what_it_could_not_check(session):
    node(session, "lost", zone=BAD, run_id="run-2")
    result = invoke("teardown", "--all", "--yes")
    assert result.exit_code == 4, result.output
    assert f"Could not check lost in {BAD}" in result.stderr
    assert "Nothing to delete" not in result.stderr


# -- item 4: a kept spot node that Google preempted is deleted by the next command that sees it --
def kept_spot(session: Session, name: str = "kept-node") -> Resource:
    """What `up --route spot` leaves, after Google preempted the node (the queued resource stays
    ACTIVE; the watchdog died with the VM)."""
    cloud, me = session.cloud, paths.owner_label()
    request = NodeRequest(
        ZONE, name, parse_accelerator("v5litepod-1"), "run-k", spot=True, owner=me
    )
    cloud.create_queued(request, f"{name}-qr", "spot")
    cloud.nodes[(ZONE, name)] = replace(cloud.nodes[(ZONE, name)], state="PREEMPTED")
    resource = Resource(
        "queued", cloud.project, ZONE, f"{name}-qr", "v5litepod-1", "run-k", "spot", name, me
    )
    session.ledger.record("created", resource)
    session.ledger.record("kept", resource, idle_s=1800.0, kept_at=time.time())
    return resource


def test_status_deletes_a_preempted_kept_node_with_its_queued_resource_and_says_so(session):
    kept_spot(session)
    result = invoke("status", "--json")
    assert result.exit_code == 0, result.output
    assert session.cloud.nodes == {} and session.cloud.queued == {}
    assert ops(session, "kept-node-qr")[-1] == "gone"
    doc = json.loads(result.stdout)
    assert [(p["node_id"], p["name"], p["verified"]) for p in doc["preempted"]] == [
        ("kept-node", "kept-node-qr", True)
    ]
    assert doc["resources"] == [] and doc["kept"] == []
    said = result.stderr
    assert "kept-node was preempted by Google" in said
    assert "deleted it and its queued resource kept-node-qr: verified gone" in said


def test_run_on_a_preempted_kept_node_deletes_it_and_exits_3(session, tmp_path):
    kept_spot(session)
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    result = invoke("run", str(script))
    assert result.exit_code == 3, result.output  # Google took it away: a cloud event
    assert session.cloud.nodes == {} and session.cloud.queued == {}
    assert "kept-node was preempted by Google" in result.stderr
    assert "tpuwizard up" in result.stderr  # what to do next


def test_a_preempted_kept_node_that_will_not_go_names_the_command_and_exits_4(session):
    kept_spot(session)
    session.cloud.faults.counters["lying_delete"] = 100
    result = invoke("status")
    assert result.exit_code == 4, result.output
    assert "NOT verified gone" in result.stderr
    assert "tpuwizard down --sandbox kept-node" in result.stderr
    assert ops(session, "kept-node-qr")[-1] == "kept"


def test_down_deletes_a_preempted_kept_node_and_its_queued_resource(session):
    kept_spot(session)
    result = invoke("down", "kept-node", "--yes")
    assert result.exit_code == 0, result.output
    assert session.cloud.nodes == {} and session.cloud.queued == {}


def test_past_its_deadline_the_line_names_the_command_not_a_hope():
    info = KeptInfo(
        "kept-node", ZONE, "v5litepod-1", "not checked", time.time() - 3600, 1.0, 1.2,
        None, 1800.0, None, checked=False,
    )  # fmt: skip
    line = kept_info_line(info)
    assert "should be deleting itself" not in line
    assert "preempted" in line and "`tpuwizard down kept-node` deletes it" in line


def test_a_zone_the_project_may_not_use_is_said_once_quietly_not_on_every_command(session):
    node(session, "mine")
    first = invoke("status")
    assert first.exit_code == 0, first.output
    assert f"Skipped {BAD}" not in first.stderr
    assert first.stderr.count(f"Not searched: {BAD}.") == 1
    assert "may not use it, so nothing can be there" in first.stderr
    for again in (invoke("status"), invoke("teardown", "--all", "--yes")):
        assert BAD not in again.stderr, again.stderr  # the same known refusal: not repeated
    listed = json.loads(invoke("status", "--json").stdout)
    assert list(listed["skipped_zones"]) == [BAD]  # the document still says it
    # Another project has not heard it yet.
    session.project = "other-project"
    assert f"Not searched: {BAD}." in invoke("status").stderr
