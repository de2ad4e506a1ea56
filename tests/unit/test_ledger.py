"""The write-ahead ledger: durable records, one instance per name and run, torn lines survived."""

import json

import pytest

from tpuwizard.core.launch.records.ledger import Ledger, Resource


def node(name="tpu-a", run_id="run-1", zone="us-central1-a"):
    return Resource("node", "practice-project", zone, name, "v5litepod-1", run_id)


@pytest.fixture
def path(tmp_path):
    return tmp_path / "state" / "ledger.jsonl"


def ops(ledger):
    return [(e.resource.name, e.resource.run_id, e.op) for e in ledger.entries()]


def test_a_record_is_on_disk_when_record_returns(path):
    Ledger(path).record("intent", node())
    # A fresh Ledger, as a restarted tpuwizard would open it, reads it back from the file.
    assert ops(Ledger(path)) == [("tpu-a", "run-1", "intent")]
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and json.loads(lines[0])["op"] == "intent"


def test_the_last_record_of_an_instance_is_its_state_and_the_intent_dates_it(path):
    ledger = Ledger(path)
    ledger.record("intent", node())
    first = ledger.entries()[0].at
    ledger.record("created", node())
    ledger.record("kept", node(), deadline=123.0)
    ledger.record("delete_pending", node(), reason="refused")
    (entry,) = Ledger(path).entries()
    assert entry.op == "delete_pending"
    assert entry.first_at == first  # billing risk starts at the intent, not the last record
    assert entry.extra == {"deadline": 123.0, "reason": "refused"}  # fields ride along


def test_gone_closes_an_instance(path):
    ledger = Ledger(path)
    ledger.record("intent", node())
    ledger.record("created", node())
    assert [e.op for e in ledger.open_entries()] == ["created"]
    ledger.record("gone", node())
    assert ledger.open_entries() == []
    assert ops(ledger) == [("tpu-a", "run-1", "gone")]


def test_the_same_name_from_two_runs_is_two_instances(path):
    ledger = Ledger(path)
    ledger.record("created", node(run_id="run-1"))
    ledger.record("created", node(run_id="run-2"))
    assert ops(ledger) == [("tpu-a", "run-1", "created"), ("tpu-a", "run-2", "created")]
    # The second run's teardown does not speak for the first run's node.
    ledger.record("gone", node(run_id="run-2"))
    assert [(e.resource.run_id, e.op) for e in ledger.open_entries()] == [("run-1", "created")]


def test_an_unknown_op_is_refused_before_anything_is_written(path):
    with pytest.raises(ValueError, match="unknown ledger op"):
        Ledger(path).record("deleted", node())
    assert not path.exists() or path.read_bytes() == b""


def torn(path, text: bytes) -> None:
    """A crash mid-write: part of a record, no newline."""
    with open(path, "ab") as f:
        f.write(text)


def test_a_torn_last_line_is_skipped_and_the_next_record_starts_a_new_line(path):
    ledger = Ledger(path)
    ledger.record("intent", node())
    whole = json.dumps({"op": "gone", "at": 1.0, **node().__dict__}).encode()
    torn(path, whole[: len(whole) // 2])
    # The torn record is lost, the one before it stands.
    assert ops(Ledger(path)) == [("tpu-a", "run-1", "intent")]
    ledger.record("created", node())
    assert ops(Ledger(path)) == [("tpu-a", "run-1", "created")]
    ledger.record("gone", node("tpu-b"))
    assert ops(Ledger(path)) == [("tpu-a", "run-1", "created"), ("tpu-b", "run-1", "gone")]


def test_a_torn_line_that_happens_to_be_valid_json_is_still_separated(path):
    # A crash between the record and its newline: the line reads well but has no end.
    ledger = Ledger(path)
    torn(path, json.dumps({"op": "intent", "at": 1.0, **node("tpu-z").__dict__}).encode())
    ledger.record("created", node())
    assert ops(Ledger(path)) == [("tpu-z", "run-1", "intent"), ("tpu-a", "run-1", "created")]


GOOD = {"op": "created", "at": 5.0, **node("good").__dict__}


@pytest.mark.parametrize(
    "line",
    [
        b"\xff\xfe not utf-8 \xc3\x28",
        b"[1, 2, 3]",
        b'"a string"',
        b"42",
        b"null",
        b"{not json",
        json.dumps({k: v for k, v in GOOD.items() if k != "op"}).encode(),
        json.dumps({**GOOD, "op": "exploded"}).encode(),
        json.dumps({k: v for k, v in GOOD.items() if k != "at"}).encode(),
        json.dumps({**GOOD, "at": "yesterday"}).encode(),
        json.dumps({**GOOD, "at": None}).encode(),
        json.dumps({k: v for k, v in GOOD.items() if k != "name"}).encode(),
        json.dumps({k: v for k, v in GOOD.items() if k != "run_id"}).encode(),
        json.dumps({**GOOD, "name": 7}).encode(),
        json.dumps({**GOOD, "zone": None}).encode(),
    ],
    ids=[
        "bad-utf8",
        "list",
        "string",
        "number",
        "null",
        "broken-json",
        "no-op",
        "unknown-op",
        "no-at",
        "at-not-a-number",
        "at-null",
        "no-name",
        "no-run-id",
        "name-not-a-string",
        "zone-null",
    ],
)
def test_unreadable_lines_are_skipped_and_the_rest_is_read(path, line):
    ledger = Ledger(path)
    ledger.record("intent", node("before"))
    torn(path, line + b"\n")
    ledger.record("created", node("after"))
    assert ops(Ledger(path)) == [("before", "run-1", "intent"), ("after", "run-1", "created")]
    assert [e.resource.name for e in Ledger(path).open_entries()] == ["before", "after"]


def test_unknown_fields_are_kept_as_extras_for_later_formats(path):
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**GOOD, "owner_email": "x@example.com"}) + "\n")
    (entry,) = Ledger(path).entries()
    assert entry.resource.name == "good" and entry.extra == {"owner_email": "x@example.com"}


def test_no_file_means_no_entries(path):
    assert Ledger(path).entries() == [] and Ledger(path).open_entries() == []
