"""A ledger line nested too deeply for Python's JSON parser (issue 39, item 7) is one more
unreadable line: reported by number, kept aside, and never in the way of the commands that
delete."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.cli import main
from tpuwizard.commands import cleanup as cleanup_commands
from tpuwizard.core import paths
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-central1-a"
DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"
TOO_DEEP = "nested too deeply to be a record"


def record_with(value: object) -> bytes:
    data = {
        "op": "created",
        "at": 1.0,
        "kind": "node",
        "project": "my-project",
        "zone": ZONE,
        "name": "deep",
        "accelerator": "v5litepod-4",
        "run_id": "run-0",
        "note": value,
    }
    return json.dumps(data).encode() + b"\n"


def nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    "bad",
    [DEEP, b"{" + b'"a":{' * 50_000 + b"}" * 50_001 + b"\n", record_with(nested(200))],
    ids=["list-100000", "object-50000", "record-with-a-200-deep-field"],
)
def test_a_line_nested_too_deeply_is_unreadable_and_hides_nothing(tmp_path, bad):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    good = Resource("node", "my-project", ZONE, "good", "v5litepod-4", "run-1")
    ledger.record("intent", good)
    with open(ledger.path, "ab") as f:
        f.write(bad)
    ledger.record("created", good)
    (entry,) = ledger.open_entries()
    assert (entry.resource, entry.op) == (good, "created")
    assert ledger.unreadable == [(2, TOO_DEEP)]
    assert ledger.side_file.read_bytes().startswith(f"line 2: {TOO_DEEP}: ".encode())


def test_a_record_with_a_small_nested_extra_still_counts(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.path.write_bytes(record_with({"a": [1, {"b": 2}]}))
    (entry,) = ledger.entries()
    assert entry.extra == {"note": {"a": [1, {"b": 2}]}} and ledger.unreadable == []


@pytest.fixture
def session(monkeypatch) -> Session:
    s = Session(practice=True, project="practice-project")
    s.clouds.use(MemoryCloud())
    monkeypatch.setattr(cleanup_commands, "open_session", lambda project, sandbox: s)
    return s


def test_status_and_teardown_report_the_line_and_still_delete(session):
    me = paths.owner_label()
    session.cloud.create_node(
        NodeRequest(ZONE, "mine", parse_accelerator("v5litepod-1"), "run-1", owner=me)
    )
    resource = Resource("node", "practice-project", ZONE, "mine", "v5litepod-1", "run-1", owner=me)
    session.ledger.record("created", resource)
    with open(session.ledger.path, "ab") as f:
        f.write(DEEP)
    status = CliRunner().invoke(main, ["status", "--sandbox"])
    assert "unexpected" not in status.output and "RecursionError" not in status.output
    assert "mine" in status.stdout and "line 2" in status.stderr, status.output
    gone = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--sandbox"])
    assert gone.exit_code == 0, gone.output
    assert "unexpected" not in gone.output and "line 2" in gone.stderr
    assert session.cloud.list_nodes(ZONE) == []
    assert [e.op for e in Ledger(session.ledger.path).entries()] == ["gone"]
