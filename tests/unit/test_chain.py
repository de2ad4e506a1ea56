"""chain.json: each entry linked to the one before and the whole sealed by chain_sha256;
receipt check finds a dropped, reordered or edited entry (the last one included), a changed
receipt, and a receipt that fails its own check even where the chain was recomputed around it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.receipt_fixtures import reseal, verifier_receipt
from tpuwizard.core.evidence.chain import (
    CHAIN_FILE,
    ChainEntry,
    append_entry,
    chain_sha256,
    check_chain,
    entry_sha256,
    file_sha256,
)


def chain_of_two(run_dir: Path) -> dict:
    (run_dir / "attempts" / "1").mkdir(parents=True)
    receipt = run_dir / "attempts" / "1" / "receipt.json"
    receipt.write_text(json.dumps(verifier_receipt()) + "\n")
    first = ChainEntry(
        1,
        "us-central1-a",
        "n",
        1.0,
        2.0,
        "preempted",
        None,
        None,
        "attempts/1/receipt.json",
        file_sha256(receipt),
    )
    append_entry(run_dir, "r1", first)
    append_entry(
        run_dir,
        "r1",
        ChainEntry(2, "us-central1-a", "n", 3.0, 4.0, "finished", "step_8", 0, None, None),
    )
    return json.loads((run_dir / CHAIN_FILE).read_text())


def relinked(data: dict) -> dict:
    """The chain with every link and its seal recomputed, as anyone can."""
    data = json.loads(json.dumps(data))
    previous = None
    for entry in data["attempts"]:
        entry["previous_sha256"] = entry_sha256(previous) if previous is not None else None
        previous = entry
    data["chain_sha256"] = chain_sha256(data)
    return data


def test_a_whole_chain_checks(tmp_path):
    facts, problems = check_chain(chain_of_two(tmp_path), tmp_path)
    assert problems == [] and len(facts) == 2 and "from step_8" in facts[1]


def test_an_edited_entry_a_dropped_one_and_a_changed_receipt_are_found(tmp_path):
    data = chain_of_two(tmp_path)
    edited = json.loads(json.dumps(data))
    edited["attempts"][0]["ended_at"] = 9.0
    assert any("link" in p for p in check_chain(edited, tmp_path)[1])
    dropped = {**data, "attempts": data["attempts"][1:]}
    assert check_chain(dropped, tmp_path)[1]
    (tmp_path / "attempts" / "1" / "receipt.json").write_text('{"ok": false}\n')
    assert any("changed" in p for p in check_chain(data, tmp_path)[1])


# -- issue 39, item 9 -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [("script_exit", 1), ("zone", "us-west1-c"), ("node", "other"), ("ended_at", 99.0)],
)
def test_an_edit_of_the_last_attempt_is_found(tmp_path, field, value):
    data = chain_of_two(tmp_path)
    data["attempts"][-1][field] = value
    (problem,) = check_chain(data, tmp_path)[1]
    assert "chain_sha256 does not match" in problem


def test_the_last_attempt_removed_is_found(tmp_path):
    data = chain_of_two(tmp_path)
    data["attempts"].pop()
    problems = check_chain(data, tmp_path)[1]
    assert any("chain_sha256 does not match" in p for p in problems), problems


def test_a_chain_without_its_seal_is_refused(tmp_path):
    data = chain_of_two(tmp_path)
    del data["chain_sha256"]
    (problem,) = check_chain(data, tmp_path)[1]
    assert "no chain_sha256" in problem and "last attempt is covered by no hash" in problem


def test_a_receipt_failing_its_own_hash_is_refused_though_the_chain_was_recomputed(tmp_path):
    data = chain_of_two(tmp_path)
    path = tmp_path / "attempts" / "1" / "receipt.json"
    receipt = json.loads(path.read_text())
    path.write_text(json.dumps(dict(receipt, device_count=8)))  # its own hash now fails
    data["attempts"][0]["receipt_sha256"] = file_sha256(path)  # the chain follows the edit
    problems = check_chain(relinked(data), tmp_path)[1]
    assert problems and all("attempt 1: its receipt" in p for p in problems), problems
    assert any("hash does not match its contents" in p for p in problems)


def test_a_resealed_receipt_that_contradicts_itself_is_refused_inside_a_chain(tmp_path):
    data = chain_of_two(tmp_path)
    path = tmp_path / "attempts" / "1" / "receipt.json"
    path.write_text(json.dumps(reseal(dict(json.loads(path.read_text()), ok=False))))
    data["attempts"][0]["receipt_sha256"] = file_sha256(path)
    problems = check_chain(relinked(data), tmp_path)[1]
    assert any("attempt 1: its receipt" in p and "verdict is not a pass" in p for p in problems)


@pytest.mark.parametrize("where", ["../outside.json", "/etc/hostname"])
def test_a_receipt_outside_the_run_folder_is_refused(tmp_path, where):
    run_dir = tmp_path / "run"
    data = chain_of_two(run_dir)
    (tmp_path / "outside.json").write_text(json.dumps(verifier_receipt()))
    data["attempts"][0]["receipt"] = where
    problems = check_chain(relinked(data), run_dir)[1]
    assert problems == [f"attempt 1: its receipt {where} is not in the run folder"]
