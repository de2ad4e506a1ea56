"""A script that prints a latin-1 byte, run on Kaggle and on Colab in practice, end to end: its
output is kept (the byte shown as U+FFFD), its --fetch files come back, and the verdict is the
run's (exit 0, the receipt proving it), never a crash of tpuwizard's own code blamed on the
script or a download (issue 48 F6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration import colab_helpers, kaggle_helpers
from tests.unit.test_free_route_bytes import BADBYTE, SHOWN

pytestmark = pytest.mark.slow


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text(BADBYTE)
    return folder


def _check(events: list[dict], code: int, err: str, named) -> None:
    assert code == 0, err
    lines = [e["text"] for e in named(events, "script_line")]
    assert "SCRIPT-START" in lines and SHOWN in lines and "SCRIPT-END" in lines
    [receipt] = named(events, "receipt_saved")
    assert receipt["ok"]
    assert not named(events, "failed")
    run_dir = Path(events[-1]["run_dir"])
    assert events[-1]["exit_code"] == 0 and events[-1]["ok"]
    kept = (run_dir / "output.txt").read_text("utf-8").splitlines()
    assert kept == ["SCRIPT-START", SHOWN, "SCRIPT-END"]
    assert (run_dir / "files" / "out" / "result.txt").read_text() == "kept"
    assert [e["path"] for e in named(events, "file_fetched")] == [
        str(run_dir / "files" / "out" / "result.txt")
    ]


def test_a_latin1_byte_on_kaggle_in_practice_keeps_the_output_and_files(tmp_path):
    project = _project(tmp_path)
    env = kaggle_helpers.cli_env(tmp_path)
    code, events, err = kaggle_helpers.launch(project, env, "--sandbox", "--fetch", "out/**")
    _check(events, code, err, kaggle_helpers.named)


def test_a_latin1_byte_on_colab_in_practice_keeps_the_output_and_files(tmp_path):
    project = _project(tmp_path)
    env = colab_helpers.user_env(tmp_path)
    args = ("--sandbox", "--script", "main.py", "--fetch", "out/**")
    code, events, err = colab_helpers.launch(project, env, *args)
    _check(events, code, err, colab_helpers.named)
