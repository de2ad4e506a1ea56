"""Records that survive anything (issue 17, item 5): a torn line never swallows the next record,
and one bad line is reported with its number and kept aside while every other line counts."""

from __future__ import annotations

import json

import pytest

from tpuwizard.core.launch.records.ledger import Ledger, Resource

GOOD = Resource("node", "my-project", "us-central1-a", "good", "v5litepod-4", "run-1")


def line(**changes: object) -> bytes:
    data = {
        "op": "created",
        "at": 1.0,
        "kind": "node",
        "project": "my-project",
        "zone": "us-central1-a",
        "name": "bad",
        "accelerator": "v5litepod-4",
        "run_id": "run-0",
        **changes,
    }
    return json.dumps(data).encode() + b"\n"


def test_a_record_after_a_torn_line_starts_a_line_of_its_own(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.path.write_bytes(line()[:40])  # a crash mid-write: no newline
    ledger.record("intent", GOOD)
    (entry,) = ledger.entries()
    assert entry.resource == GOOD
    assert ledger.unreadable == [(1, "not JSON (torn by a crash, or edited)")]


@pytest.mark.parametrize(
    "bad, why",
    [
        (b"\xff\xfe not utf-8\n", "not UTF-8"),
        (b"[1, 2]\n", "not a JSON object"),
        (line(op="exploded"), "unknown op 'exploded'"),
        (line(at="yesterday"), "missing or malformed fields"),
        (line(kind=None).replace(b'"kind": null, ', b""), "missing or malformed fields"),
        (line(zone="../../etc"), "invalid zone '../../etc'"),
        (line(name="a/b"), "invalid name 'a/b'"),
        (line(name="x\n"), "invalid name 'x\\n'"),
        (line(kind="disk"), "unknown kind 'disk'"),
    ],
)
def test_one_bad_line_is_reported_by_number_kept_aside_and_hides_nothing(tmp_path, bad, why):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.record("intent", GOOD)
    with open(ledger.path, "ab") as f:
        f.write(bad)
    ledger.record("created", GOOD)
    (entry,) = ledger.open_entries()
    assert (entry.resource, entry.op) == (GOOD, "created")
    assert ledger.unreadable == [(2, why)]
    kept = ledger.side_file.read_bytes()
    assert kept.startswith(b"line 2: ") and bad.rstrip(b"\n") in kept


def test_the_side_file_is_not_rewritten_when_nothing_changed(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.path.write_bytes(b"garbage\n")
    ledger.entries()
    first = ledger.side_file.stat().st_mtime_ns
    ledger.entries()
    assert ledger.side_file.stat().st_mtime_ns == first
    assert ledger.unreadable == [(1, "not JSON (torn by a crash, or edited)")]


def test_a_clean_ledger_has_no_side_file(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.record("intent", GOOD)
    ledger.entries()
    assert ledger.unreadable == [] and not ledger.side_file.exists()


def _fifo(path):
    import os

    os.mkfifo(path)


@pytest.mark.parametrize(
    ("put", "why"),
    [
        (_fifo, "it is a named pipe (FIFO), not a regular file"),
        (lambda path: path.mkdir(), "it is a folder, not a regular file"),
        (lambda path: path.symlink_to("/dev/zero"), "it is a character device (such as"),
        (lambda path: None, None),  # none yet: reads as empty
        (lambda path: path.write_bytes(b'{"op": "pushed"\n\xff\n'), None),  # bad lines skipped
    ],
)
def test_a_free_route_ledger_that_cannot_be_read_says_why(tmp_path, put, why):
    """Reliability round 6, G7: ``status`` and ``teardown --all`` say this beside the TPUs."""
    from tpuwizard.core.kaggle.ledger import unreadable

    path = tmp_path / "kaggle-ledger.jsonl"
    put(path)
    said = unreadable(path)
    assert said == why if why is None else said is not None and said.startswith(why)
