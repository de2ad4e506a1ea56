"""A kept node's ledger fields are read in one place (core/launch/kept/record.py), typed: the
status lines, the heartbeats, the login, the replacement's plan and the chain's end all read a
KeptRecord, never the record's keys by string."""

from __future__ import annotations

import ast
from pathlib import Path

from tpuwizard.core.deadlines import EndedBy
from tpuwizard.core.launch.kept import record as kept_record
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.kept.settings import kept_chain_end, replaced_by
from tpuwizard.core.launch.records.ledger import Ledger, Resource

PACKAGE = Path(__file__).resolve().parents[2] / "tpuwizard"
NODE = Resource("node", "my-project", "us-central1-a", "dev", "v5litepod-1", "run-1", route="spot")


def test_what_keep_writes_is_what_every_reader_gets_back(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    written = KeptRecord(
        kept_at=1000.0,
        deadline=4600.0,
        ended_by=EndedBy.GOOGLE,
        idle_s=1800.0,
        settings={"max_run_minutes": 60, "zones": ["us-central1-a"]},
    )
    ledger.record("intent", NODE)
    ledger.record("kept", NODE, **written.fields())
    (entry,) = ledger.open_entries()
    read = KeptRecord.of(entry)
    assert read == written and read.ended_by_google
    assert kept_chain_end(entry, now=2000.0) == 4600.0  # the recorded deadline, not now + max-run


def test_an_older_record_reads_as_the_fields_it_lacks(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ledger.record("kept", NODE, deadline=None)
    (entry,) = ledger.open_entries()
    read = KeptRecord.of(entry)
    assert read.kept_at == entry.at and read.deadline is None and read.idle_s is None
    assert read.settings == {} and not read.ended_by_google
    # No deadline recorded: the route's default --max-run from now (spot: 120 minutes).
    assert kept_chain_end(entry, now=2000.0) == 2000.0 + 120 * 60


def test_a_replaced_node_names_its_last_replacement(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    second = Resource("node", "my-project", "us-central1-a", "dev-2", "v5litepod-1", "run-2")
    ledger.record("gone", NODE, **{kept_record.REPLACED_BY_FIELD: "dev-2"})
    ledger.record("gone", second, **{kept_record.REPLACED_BY_FIELD: "dev-3"})
    assert replaced_by(ledger.entries(), "dev") == "dev-3"
    assert replaced_by(ledger.entries(), "other") is None


def test_no_module_reads_a_kept_records_field_by_its_key():
    keys = {"kept_at", "deadline", "ended_by", "idle_s", "settings", "replaced_by"}
    keys |= {kept_record.SETTINGS_FIELD, kept_record.REPLACED_BY_FIELD}
    readers = set()
    for path in PACKAGE.rglob("*.py"):
        if path == Path(kept_record.__file__) or "sandbox" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            target, key = None, None
            if isinstance(node, ast.Subscript):
                target, key = node.value, node.slice
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
            ):
                target, key = node.func.value, node.args[0]
            is_extra = isinstance(target, ast.Attribute) and target.attr == "extra"
            named = isinstance(key, ast.Constant) and key.value in keys
            named = named or (isinstance(key, ast.Name) and key.id.endswith("_FIELD"))
            if is_extra and named:
                readers.add(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert readers == set()
