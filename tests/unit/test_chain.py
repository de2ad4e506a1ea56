"""chain.json: each entry linked to the one before; receipt check finds a dropped, reordered
or edited entry, and a changed receipt."""

from __future__ import annotations

import json
from pathlib import Path

from tpuwizard.core.evidence.chain import CHAIN_FILE, ChainEntry, append_entry, check_chain


def chain_of_two(run_dir: Path) -> dict:
    (run_dir / "attempts" / "1").mkdir(parents=True)
    receipt = run_dir / "attempts" / "1" / "receipt.json"
    receipt.write_text('{"ok": true}\n')
    from tpuwizard.core.evidence.chain import file_sha256

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
