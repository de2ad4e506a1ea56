"""`tpuwizard receipt check runs/<run id>` (issue 49, the newcomer's round 5): the words say a
run's receipt can be checked, and the run folder is what every screen names; it was refused as
"a folder, not a regular file". The run folder's own receipt is checked now, and the verdict
names the file it rests on; a folder that holds none says which file to give."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.receipt_fixtures import verifier_receipt
from tpuwizard.cli import main
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK


def check(*args: str):
    return CliRunner().invoke(main, ["receipt", "check", *args])


def test_a_run_folder_is_checked_by_the_receipt_it_holds(tmp_path):
    folder = tmp_path / "runs" / "20261206-042136-1cc5"
    folder.mkdir(parents=True)
    (folder / "receipt.json").write_text(json.dumps(verifier_receipt("cpu", 4)))
    (folder / "cost.json").write_text("{}")
    result = check(str(folder), "--expect", "cpu")
    assert result.exit_code == EXIT_OK, result.output
    assert f"Checking {folder / 'receipt.json'}: the run folder's receipt." in result.stderr
    assert f"{folder / 'receipt.json'}: valid" in result.stdout
    assert check(str(folder), "--expect", "tpu").exit_code == EXIT_FAILED  # judged, not waved


def test_a_resumed_runs_chain_is_what_its_folder_is_checked_by(tmp_path):
    (tmp_path / "receipt.json").write_text(json.dumps(verifier_receipt("cpu", 4)))
    (tmp_path / "chain.json").write_text("{}")
    result = check(str(tmp_path))
    assert f"Checking {tmp_path / 'chain.json'}: the run folder's chain of attempts." in (
        result.stderr
    )


def test_a_folder_without_a_receipt_names_the_file_to_give(tmp_path):
    result = check(str(tmp_path))
    assert result.exit_code == EXIT_BAD_INPUT
    assert "receipt check runs/<run id>/receipt.json" in result.stderr
    assert "not a regular file" not in result.stderr


def test_a_kept_runs_folder_checks_its_output_and_says_where_the_receipt_is(tmp_path):
    (tmp_path / "output.txt").write_text("no report here\n")
    result = check(str(tmp_path))
    assert "the run folder's script output, checked as the course's report" in result.stderr
    assert "the node's receipt is in the run folder of the `up` that made it" in result.stderr


def _missing(path):
    pass


def _fifo(path):
    import os

    os.mkfifo(path)


@pytest.mark.parametrize(
    ("put", "said"),
    [
        (_missing, "its chain of attempts is missing (No chain at"),
        (_fifo, "its chain of attempts cannot be read ("),
        (lambda path: path.mkdir(), "cannot be read ("),
        (lambda path: path.symlink_to("/dev/zero"), "cannot be read ("),
        (lambda path: path.symlink_to(path), "cannot be read ("),  # a link to itself
        (lambda path: path.write_text("{"), "cannot be read ("),
    ],
)
@pytest.mark.parametrize("as_json", [False, True])
def test_a_resumed_run_without_a_readable_chain_is_never_called_valid(tmp_path, put, said, as_json):
    """Reliability round 6, G8: with attempts/ there and chain.json gone (or no file), the run
    folder was 'valid' from the last attempt's receipt alone."""
    for n in (1, 2):
        attempt = tmp_path / "attempts" / str(n)
        attempt.mkdir(parents=True)
        (attempt / "receipt.json").write_text(json.dumps(verifier_receipt("cpu", 4)))
    (tmp_path / "receipt.json").write_text(json.dumps(verifier_receipt("cpu", 4)))
    put(tmp_path / "chain.json")
    result = check(str(tmp_path), "--expect", "cpu", *(["--json"] if as_json else []))
    assert result.exit_code == EXIT_FAILED, result.output
    if as_json:
        verdict = json.loads(result.stdout)
        assert not verdict["ok"] and said in " ".join(verdict["problems"])
    else:
        out = " ".join(result.stdout.split())
        assert said in out and "so the run is not valid" in out
        assert f"{tmp_path / 'chain.json'}: REJECTED" in out and ": valid" not in out
        assert f"receipt check {tmp_path / 'attempts'}/<n>/receipt.json" in out


def test_a_chain_json_named_itself_that_is_missing_stays_bad_input(tmp_path):
    result = check(str(tmp_path / "chain.json"))
    assert result.exit_code == EXIT_BAD_INPUT and "No chain at" in result.stderr
