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


# -- issue 48, item 5: a chain proves what a receipt must prove, and is read as untrusted input --
def chain_with_receipts(run_dir: Path, backend: str = "cpu", devices: int = 1) -> dict:
    """Two attempts (the first preempted), each with a verifier receipt on ``backend``."""
    for n, ended in ((1, "preempted"), (2, "finished")):
        folder = run_dir / "attempts" / str(n)
        folder.mkdir(parents=True)
        receipt = folder / "receipt.json"
        receipt.write_text(json.dumps(verifier_receipt(backend, local_devices=devices)) + "\n")
        entry = ChainEntry(
            n, "us-central1-a", "n", 1.0 + n, 2.0 + n, ended, None, 0 if n == 2 else None,
            f"attempts/{n}/receipt.json", file_sha256(receipt),
        )  # fmt: skip
        append_entry(run_dir, "r1", entry)
    return json.loads((run_dir / CHAIN_FILE).read_text())


def test_expect_and_accelerator_are_held_against_every_attempts_receipt(tmp_path):
    data = chain_with_receipts(tmp_path, "cpu", devices=4)
    assert check_chain(data, tmp_path)[1] == []
    facts, problems = check_chain(data, tmp_path, expect="cpu")
    assert problems == [] and "every attempt's receipt proves --expect cpu" in facts
    problems = check_chain(data, tmp_path, expect="tpu")[1]
    for n in (1, 2):  # a CPU practice chain is no TPU evidence, attempt by attempt
        assert any(
            p.startswith(f"attempt {n}: its receipt") and "not the expected tpu" in p
            for p in problems
        ), problems
    problems = check_chain(data, tmp_path, expect="tpu", accelerator="v5litepod-4")[1]
    assert any("device kind" in p or "not the expected tpu" in p for p in problems)
    problems = check_chain(data, tmp_path, accelerator="v6e-256")[1]
    assert any("4 devices, but v6e-256 has 256" in p for p in problems), problems


def test_with_expect_an_attempt_that_ran_the_script_without_a_receipt_proves_nothing(tmp_path):
    data = chain_of_two(tmp_path)  # attempt 2 ran the script (exit 0) and kept no receipt
    assert check_chain(data, tmp_path)[1] == []
    problems = check_chain(data, tmp_path, expect="cpu")[1]
    assert problems == [
        "attempt 2 ran the script but kept no receipt, so nothing shows where it ran (--expect cpu)"
    ]


def test_a_chain_with_no_receipt_at_all_proves_no_platform(tmp_path):
    append_entry(
        tmp_path,
        "r1",
        ChainEntry(1, "us-central1-a", "n", 1.0, 2.0, "gone", None, None, None, None),
    )
    data = json.loads((tmp_path / CHAIN_FILE).read_text())
    assert check_chain(data, tmp_path)[1] == []
    assert check_chain(data, tmp_path, expect="tpu")[1] == [
        "no attempt kept a receipt, so nothing proves --expect tpu"
    ]


def test_an_unknown_accelerator_is_bad_input_even_where_no_receipt_is_checked(tmp_path):
    from tpuwizard.core.errors import BadInput

    with pytest.raises(BadInput, match="v9z-8"):
        check_chain(chain_of_two(tmp_path), tmp_path, accelerator="v9z-8")


def test_a_chain_giving_a_key_twice_is_refused(tmp_path):
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.evidence.chain import read_chain

    chain_of_two(tmp_path)
    path = tmp_path / CHAIN_FILE
    text = path.read_text()
    assert read_chain(path)["kind"] == "chain"
    path.write_text(text.replace('"kind": "chain",', '"kind": "chain", "kind": "chain",', 1))
    with pytest.raises(BadInput, match="gives the key 'kind' twice"):
        read_chain(path)


def test_a_chain_nested_past_the_parser_is_bad_input_not_a_recursion_error(tmp_path):
    from tests.untrusted_files import nested
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.evidence.chain import read_chain

    path = tmp_path / CHAIN_FILE
    path.write_text('{"kind": "chain", "attempts": ' + nested(100_000) + "}")
    with pytest.raises(BadInput, match="nests deeper than 16 levels"):
        read_chain(path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_chain_that_is_no_regular_file_is_refused_at_once(tmp_path, kind):
    from tests.untrusted_files import put_hostile, within
    from tpuwizard.core.errors import BadInput
    from tpuwizard.core.evidence.chain import read_chain

    path = put_hostile(tmp_path / CHAIN_FILE, kind)
    with pytest.raises(BadInput, match="not a regular file"):
        within(10, lambda: read_chain(path))


def test_receipt_check_of_a_cpu_chain_refuses_it_as_tpu_evidence(tmp_path):
    """End to end: the command a user types, in a fresh interpreter."""
    import subprocess

    from tests.conftest import tpuwizard_cmd
    from tests.untrusted_files import nested

    chain_with_receipts(tmp_path, "cpu", devices=4)
    path = str(tmp_path / CHAIN_FILE)

    def check(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            tpuwizard_cmd("receipt", "check", path, *options),
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert check("--expect", "cpu").returncode == 0
    for options in (["--expect", "tpu"], ["--expect", "gpu"], ["--accelerator", "v6e-256"]):
        refused = check(*options)
        assert refused.returncode == 1, (options, refused.stdout, refused.stderr)
        assert f"{path}: REJECTED" in refused.stdout
    (tmp_path / CHAIN_FILE).write_text('{"kind": "chain", "attempts": ' + nested(100_000) + "}")
    deep = check()
    assert deep.returncode == 2 and "nests deeper than" in deep.stderr, deep.stderr
    assert "Traceback" not in deep.stderr and "unexpected" not in deep.stderr
