"""A bad file of another part of tpuwizard never stops the safety commands (reliability round 6,
G7): with the Kaggle ledger a FIFO and the Colab ledger a folder, `status` still lists the kept
TPU and `teardown --all` still deletes it, each naming the ledger it could not read; the practice
sandbox's state file as a FIFO or /dev/zero is said at once, never read without end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import end_practice, up
from tests.integration.launch_helpers import env

pytestmark = pytest.mark.slow


def cli(cwd: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        tpuwizard_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=120, env=env()
    )
    return proc.returncode, proc.stdout, " ".join(proc.stderr.split())


@pytest.mark.rotating("kept-node-e2e")
def test_unreadable_free_route_ledgers_are_said_beside_the_tpus_not_instead(tmp_path, home):
    kept = up(tmp_path, "--name", "kept-a")
    os.mkfifo(home / "kaggle-ledger.jsonl")
    (home / "colab-ledger.jsonl").mkdir()
    try:
        code, out, err = cli(tmp_path, "status", "--sandbox", "--json")
        assert code == 3, err  # listed, but two ledgers could not be checked
        document = json.loads(out)
        assert [r["name"] for r in document["resources"]] == [kept["name"]]
        [kaggle] = document["kaggle_kernels"]
        [colab] = document["colab_sessions"]
        assert kaggle["problem"] == "it is a named pipe (FIFO), not a regular file"
        assert colab["problem"] == "it is a folder, not a regular file"
        for which, what in (("Kaggle", "kernels"), ("Colab", "sessions")):
            assert f"The {which} ledger " in err and f"its {what} are not checked here" in err
        assert "and this goes on with the TPUs. Move that file aside" in err

        code, out, err = cli(tmp_path, "teardown", "--sandbox", "--all", "--yes", "--json")
        assert code == 4, err  # the TPU verified gone; the free routes' records unchecked
        [result] = json.loads(out)["results"]
        assert result["name"] == kept["name"] and result["verified"]
        assert "its kernels are not deleted here" in err and "its sessions are not stopped" in err
    finally:
        end_practice(home)


@pytest.mark.parametrize("put", ["fifo", "/dev/zero"])
def test_a_practice_state_file_that_is_no_file_is_said_at_once(tmp_path, home, put):
    state = home / "sandbox" / "state.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    if put == "fifo":
        os.mkfifo(state)
    else:
        state.symlink_to(put)
    try:
        for args in (("status",), ("teardown", "--all", "--yes")):
            code, _, err = cli(tmp_path, *args, "--sandbox")  # hung, or grew to 24 GB
            assert code == 3, err
            assert f"The practice sandbox cannot read its state file {state}: it is a " in err
            assert "Move that file aside" in err or "move that file aside" in err
    finally:
        end_practice(home)


@pytest.mark.rotating("colab-e2e")
def test_a_colab_stand_in_state_file_that_is_no_file_is_said_at_once(tmp_path):
    """Issue 56, item 3: a FIFO in place of the Colab stand-in's state hung every `colab` call
    (the launch, then its stop); now each call says what the file is and the launch ends."""
    from tests.integration.colab_helpers import launch, make_project, practice_home, user_env

    project, env = make_project(tmp_path), user_env(tmp_path)
    state = practice_home(tmp_path) / "state.json"
    state.parent.mkdir(parents=True)
    os.mkfifo(state)
    code, _, err = launch(project, env, "--script", "main.py", timeout=120)
    assert code == 4, err  # nothing created, and the stop could not be checked: said so
    assert f"The practice Colab stand-in cannot read its state file {state}: it is a named " in err
    assert "NOT verified stopped" in err and "Traceback" not in err
    assert state.is_fifo()  # left as it was
