"""Bad local paths are bad input (issue 17, item 12): a clear message and exit 2, never a
traceback, a hang or "cannot reach the API"; a user's file is never overwritten silently."""

from __future__ import annotations

import errno
import os

import pytest
from click.testing import CliRunner

from tpuwizard.cli import main
from tpuwizard.core.cloud.diagnose.failure import diagnose


def run(*args: str, **env: str):
    return CliRunner().invoke(main, list(args), env=env or None)


def test_notebook_refuses_to_overwrite_without_force(tmp_path):
    mine = tmp_path / "mine.ipynb"
    mine.write_text("my own notes")
    refused = run("notebook", "--out", str(mine))
    assert refused.exit_code == 2 and "--force" in refused.output
    assert mine.read_text() == "my own notes"
    assert run("notebook", "--out", str(mine), "--force").exit_code == 0
    assert mine.read_text() != "my own notes"


@pytest.mark.parametrize("kind", ["file", "unwritable"])
def test_a_tpuwizard_home_that_is_a_file_or_unwritable_is_bad_input(tmp_path, kind):
    home = tmp_path / "home"
    if kind == "file":
        home.write_text("not a folder")
    else:
        home.mkdir(mode=0o500)
        if os.access(home, os.W_OK):
            pytest.skip("running as root: every folder is writable")
    result = run("status", "--sandbox", TPUWIZARD_HOME=str(home))
    assert result.exit_code == 2, result.output
    assert "TPUWIZARD_HOME" in result.output and "cannot reach" not in result.output.lower()
    assert "Traceback" not in result.output


def test_launch_with_a_run_dir_that_is_a_file_is_refused_before_any_call(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    args = ["launch", "--sandbox", "--accelerator", "v5litepod-1", "--zone", "us-central1-a"]
    result = run(*args, "--run-dir", str(afile))
    assert result.exit_code == 2, result.output
    assert "is a file, not a folder" in result.output


def test_verify_with_a_receipt_that_is_a_folder_is_bad_input(tmp_path):
    result = run("verify", "--receipt", str(tmp_path))
    assert result.exit_code == 2 and "is a folder" in result.output


@pytest.mark.parametrize(
    "err",
    [
        PermissionError(errno.EACCES, "Permission denied", "/x/ledger.jsonl"),
        OSError(errno.ENOSPC, "No space left on device", "/x/receipt.json"),
        NotADirectoryError(errno.ENOTDIR, "Not a directory", "/x/runs"),
    ],
)
def test_disk_errors_are_never_called_network_errors(err):
    d = diagnose(err)
    assert d.kind == "local_disk" and "Cannot reach" not in d.title
    assert err.filename in d.explanation


def test_a_refused_connection_is_still_the_network():
    assert diagnose(ConnectionRefusedError(errno.ECONNREFUSED, "refused")).kind == "unreachable"


@pytest.mark.parametrize("command", ["launch", "up"])
def test_a_run_folder_on_a_full_disk_is_refused_before_anything_is_made(
    tmp_path, home, monkeypatch, command
):
    # issue 39, item 11: found only after the TPU was made and verified.
    from tests.unit.test_cli_bad_input import refused
    from tpuwizard.core import paths

    full = tmp_path / "full-disk"
    full.mkdir()
    real = paths.free_bytes
    monkeypatch.setattr(
        paths, "free_bytes", lambda p: 512 * 1024 if p.is_relative_to(full) else real(p)
    )
    monkeypatch.chdir(full)  # runs/ here: where both put run folders by default
    said = refused(
        home, command, "--sandbox", "--accelerator", "v5litepod-1", "--zone", "us-central1-a"
    )
    assert f"the disk of {full} has 512 KiB free, less than the 16 MiB a run needs" in said
    assert "another disk" in said


def test_the_free_space_of_a_real_folder_is_read(tmp_path):
    from tpuwizard.core import paths

    assert (paths.free_bytes(tmp_path) or 0) > 0
    assert paths.folder_problem(tmp_path / "runs", "The run folder") is None
