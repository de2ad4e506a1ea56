"""`teardown NAME` acts on the ledger's record first: where this install made it is known, so a
zone that cannot be surveyed (or a survey of every zone) never stands between the user and the
delete. Without a record, the survey decides, and its failure is a cloud error (exit 3)."""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass

import pytest
from click.testing import CliRunner
from google.api_core import exceptions as gx

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.commands import cleanup as cleanup_commands
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-central1-a"


@dataclass
class UnsurveyableCloud(MemoryCloud):
    """Listing the project's zones fails, as it does when a zone answers 403 or the API is down."""

    def list_zones(self) -> list[str]:
        raise gx.ServiceUnavailable("The service is currently unavailable.")


@pytest.fixture
def session(monkeypatch) -> Session:
    s = Session(practice=True, project="practice-project")
    s.clouds.use(UnsurveyableCloud())
    monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: s)
    return s


def make_node(session: Session, name: str, run_id: str = "run-1") -> Resource:
    cloud = session.cloud
    request = NodeRequest(
        ZONE, name, parse_accelerator("v5litepod-1"), run_id, owner=paths.owner_label()
    )
    cloud.create_node(request)
    resource = Resource(
        "node", cloud.project, ZONE, name, "v5litepod-1", run_id, owner=paths.owner_label()
    )
    session.ledger.record("created", resource)
    return resource


def test_a_recorded_resource_is_deleted_without_surveying_any_zone(session):
    make_node(session, "kept-one")
    result = CliRunner().invoke(main, ["teardown", "kept-one", "--yes", "--sandbox"])
    assert result.exit_code == 0, result.output
    cloud = session.cloud
    assert (ZONE, "kept-one") not in cloud.nodes
    assert cloud.count("delete_node") >= 1
    assert [e.op for e in session.ledger.entries()] == ["gone"]


def test_without_a_record_the_survey_decides_and_its_failure_is_a_cloud_error(session):
    result = CliRunner().invoke(main, ["teardown", "never-recorded", "--yes", "--sandbox"])
    assert result.exit_code == 3, result.output


def keep(session: Session, name: str) -> None:
    """What `up` leaves in the ledger: a created node, kept for iterating."""
    session.ledger.record("kept", make_node(session, name), idle_s=1800.0)


@pytest.fixture
def at_a_terminal(monkeypatch) -> None:
    monkeypatch.setattr(cleanup_commands, "stdin_is_terminal", lambda: True)


def test_down_without_a_name_deletes_the_only_kept_node_once_confirmed(session, at_a_terminal):
    keep(session, "kept-one")
    result = CliRunner().invoke(main, ["down", "--sandbox"], input="y\n")
    assert result.exit_code == 0, result.output
    assert "Delete kept-one (us-central1-a)?" in result.stderr  # still asked, as with a name
    assert (ZONE, "kept-one") not in session.cloud.nodes


def test_declining_the_delete_is_the_users_choice_exit_0(session, at_a_terminal):
    keep(session, "kept-one")
    result = CliRunner().invoke(main, ["down", "--sandbox", "kept-one"], input="n\n")
    assert result.exit_code == 0, result.output  # nothing went wrong: README's 1 is "failed"
    assert "Nothing deleted." in result.stderr
    assert (ZONE, "kept-one") in session.cloud.nodes


def test_down_without_a_name_says_why_when_no_or_several_nodes_are_kept(session):
    none = CliRunner().invoke(main, ["down", "--sandbox"])
    assert none.exit_code == 2, none.output
    assert "No kept node" in none.stderr and "tpuwizard down --sandbox NAME" in none.stderr
    keep(session, "kept-one")
    keep(session, "kept-two")
    several = CliRunner().invoke(main, ["down", "--sandbox"])
    assert several.exit_code == 2, several.output
    assert "2 kept nodes (kept-one, kept-two)" in several.stderr
    assert "tpuwizard down --sandbox NAME" in several.stderr
    assert {(ZONE, "kept-one"), (ZONE, "kept-two")} <= set(session.cloud.nodes)


def test_teardown_without_a_name_still_asks_for_one_in_its_own_name(session):
    keep(session, "kept-one")
    result = CliRunner().invoke(main, ["teardown", "--sandbox"])
    assert result.exit_code == 2, result.output
    assert "Name one resource (tpuwizard teardown NAME) or use --all." in result.stderr
    assert (ZONE, "kept-one") in session.cloud.nodes


# -- issue 22, item 7: a name someone else holds ------------------------------------------------
BOB = "b0b0000000000b0b"


@pytest.fixture
def surveyable(monkeypatch) -> Session:
    s = Session(practice=True, project="practice-project")
    s.clouds.use(MemoryCloud())
    monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: s)
    return s


def bobs(session: Session, name: str, zone: str) -> None:
    session.cloud.create_node(
        NodeRequest(zone, name, parse_accelerator("v5litepod-1"), "run-b", owner=BOB)
    )


def test_a_name_another_owner_holds_in_two_zones_asks_which_zone(surveyable):
    bobs(surveyable, "shared", ZONE)
    bobs(surveyable, "shared", "us-west1-c")
    result = CliRunner().invoke(main, ["teardown", "shared", "--yes", "--other-owner", "--sandbox"])
    assert result.exit_code == 2, result.output
    assert "ValueError" not in result.output and "unexpected error" not in result.output
    assert "shared is held by another tpuwizard user in 2 zones" in result.stderr
    assert "us-central1-a, us-west1-c" in result.stderr and "--zone" in result.stderr
    assert {(ZONE, "shared"), ("us-west1-c", "shared")} <= set(surveyable.cloud.nodes)
    assert surveyable.cloud.count("delete_node") == 0


def test_zone_picks_the_one_of_another_owners_names_to_delete(surveyable):
    bobs(surveyable, "shared", ZONE)
    bobs(surveyable, "shared", "us-west1-c")
    result = CliRunner().invoke(
        main,
        ["teardown", "shared", "--zone", "us-west1-c", "--yes", "--other-owner", "--sandbox"],
    )
    assert result.exit_code == 0, result.output
    assert (ZONE, "shared") in surveyable.cloud.nodes
    assert ("us-west1-c", "shared") not in surveyable.cloud.nodes


def test_a_name_now_someone_elses_is_left_alone_and_not_called_verified_gone(surveyable):
    ours = Resource(
        "node",
        "practice-project",
        ZONE,
        "reused",
        "v5litepod-1",
        "run-1",
        owner=paths.owner_label(),
    )
    surveyable.ledger.record("created", ours)  # ours went; Bob made one of the same name since
    bobs(surveyable, "reused", ZONE)
    result = CliRunner().invoke(main, ["teardown", "reused", "--yes", "--json", "--sandbox"])
    assert result.exit_code == 0, result.output
    said = result.stderr
    assert (
        f"reused in {ZONE} is someone else's now (owner {BOB}, tpuwizard run run-b); "
        "left alone; yours is gone"
    ) in said
    assert "verified gone: reused" not in said
    assert surveyable.cloud.nodes[(ZONE, "reused")].state == "READY"
    assert surveyable.cloud.count("delete_node") == 0
    (row,) = json.loads(result.stdout)["results"]
    assert row["verified"] and row["held_by"] == f"owner {BOB}, tpuwizard run run-b"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_at_deleting_finishes_that_delete_then_stops(monkeypatch, sig):
    """Ctrl+C (or SIGTERM, a closed terminal) while a node is being deleted: the delete goes
    through, is verified and recorded; the next is not started; exit 128 + N, no 'Aborted!'."""
    session = Session(practice=True, project="practice-project")
    session.clouds.use(MemoryCloud())
    monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: session)
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    for name in ("first", "second"):
        make_node(session, name)
    session.cloud.on_delete = lambda zone, name: signal.raise_signal(sig)
    try:
        result = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--sandbox"])
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert result.exit_code == 128 + sig, result.output
    assert "Aborted" not in result.output and "Traceback" not in result.output
    assert len(session.cloud.nodes) == 1  # one deleted, the other not started
    assert [e.op for e in session.ledger.entries()].count("gone") == 1
    assert "Stopped before deleting" in result.output
