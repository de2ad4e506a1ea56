"""The free routes' stand-ins read their state files bounded (issue 56, item 3): a FIFO in
place of the Colab stand-in's ``state.json`` hung every `colab` call, ``/dev/zero`` read 10 MB
and failed with a traceback; the Kaggle stand-in's ``session.json`` was read unbounded. Each is
said at once (Colab) or taken as no state (Kaggle's keeper never started), and left in place."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tpuwizard.sandbox.colab import cli as colab_cli
from tpuwizard.sandbox.colab import state as colab_state
from tpuwizard.sandbox.kaggle import sessions as kaggle_sessions
from tpuwizard.sandbox.kaggle.keeper import STATE_FILE, write_state

ANSWER_WITHIN_S = 20.0  # what a FIFO would hang for ever, bounded for the test


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _endless(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(path: Path) -> None:
    path.mkdir()


def _too_large(path: Path) -> None:
    path.write_text('{"server": {}, "pad": "' + "x" * 2048 + '"}')


def _cut_short(path: Path) -> None:
    path.write_text('{"server": {')


def _a_list(path: Path) -> None:
    path.write_text("[]")


def answered(call: Callable[[], object]) -> object:
    """What ``call`` returns, failing the test if it has not returned in ANSWER_WITHIN_S."""
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(ANSWER_WITHIN_S)
    assert result, f"no answer in {ANSWER_WITHIN_S} s: the read did not end"
    return result[0]


@pytest.mark.parametrize(
    ("put", "said"),
    [
        (_fifo, "it is a named pipe (FIFO), not a regular file"),
        (_endless, "it is a character device (such as /dev/zero), not a regular file"),
        (_folder, "it is a folder, not a regular file"),
        (_too_large, "it is larger than 1 KiB"),
        (_cut_short, "it is damaged ("),
        (_a_list, "it is damaged (it holds no JSON object)"),
    ],
)
@pytest.mark.parametrize("command", [["sessions"], ["status"], ["new", "--tpu", "v5e1"]])
def test_a_colab_state_file_that_is_no_small_json_file_is_said_never_read_without_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, put, said, command
) -> None:
    home = tmp_path / "colab"
    home.mkdir()
    monkeypatch.setenv(colab_state.HOME_ENV, str(home))
    monkeypatch.delenv(colab_state.FAULTS_ENV, raising=False)
    monkeypatch.setattr(colab_state, "STATE_LIMIT_BYTES", 1024)
    state = home / "state.json"
    put(state)
    assert answered(lambda: colab_cli.main(command)) == 1
    err = capsys.readouterr().err
    assert f"The practice Colab stand-in cannot read its state file {state}: {said}" in err
    assert "Move that file aside" in err and "Traceback" not in err
    assert state.is_symlink() or state.exists()  # left as it was: the only record


def test_a_colab_state_file_is_still_read_and_written_back(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "colab"
    home.mkdir()
    monkeypatch.setenv(colab_state.HOME_ENV, str(home))
    monkeypatch.delenv(colab_state.FAULTS_ENV, raising=False)
    assert colab_cli.main(["new", "-s", "one", "--tpu", "v5e1"]) == 0
    with colab_state.locked_state(home) as state:
        assert list(state["local"]) == ["one"]
    assert (home / "state.json").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("put", [_fifo, _endless, _folder, _cut_short, _a_list])
def test_a_kaggle_session_state_that_is_no_small_json_file_is_no_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, put
) -> None:
    monkeypatch.setattr(kaggle_sessions, "SESSION_STATE_LIMIT", 1024)
    put(tmp_path / STATE_FILE)
    assert answered(lambda: kaggle_sessions._read_state(tmp_path)) == {}


def test_a_kaggle_session_state_the_keeper_wrote_is_read(tmp_path: Path) -> None:
    write_state(str(tmp_path), exit_code=0, group=123)
    assert kaggle_sessions._read_state(tmp_path) == {"exit_code": 0, "group": 123}
