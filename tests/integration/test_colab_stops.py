"""`launch --route colab` stopped: a stop signal while the script runs stops the session and
waits for `colab stop` (verified by listing); after SIGKILL, `status` lists the session and
`teardown` stops it, touching no session tpuwizard's ledger does not hold. Slow drills: one of
them per suite run (ROTATING_PER_RUN's colab-e2e)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.colab_helpers import ledger, make_project, named, practice_home, user_env
from tests.integration.kaggle_helpers import cli
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


class Launched:
    """`launch --route colab --json` in the background, its events read as they come."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        argv = ["launch", "--route", "colab", "--json", "--script", "main.py", "--", "--sleep"]
        self.proc = subprocess.Popen(
            tpuwizard_cmd(*argv), cwd=cwd, env=env, stdout=subprocess.PIPE, text=True
        )
        self.events: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        self.events.extend(json.loads(line) for line in self.proc.stdout)

    def sleeping(self) -> bool:
        return any(e.get("text") == "sleeping" for e in named(self.events, "script_line"))


def _cell_pids(tmp_path: Path) -> list[int]:
    state = json.loads((practice_home(tmp_path) / "state.json").read_text())
    return [pid for s in state["local"].values() for pid in s["pids"]]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"


def _listed(tmp_path: Path) -> str:
    env = dict(os.environ, TPUWIZARD_COLAB_HOME=str(practice_home(tmp_path)))
    argv = [sys.executable, "-m", "tpuwizard.sandbox.colab.cli", "sessions"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.rotating("colab-e2e")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_while_the_script_runs_stops_the_session_and_waits(tmp_path, stop):
    project = make_project(tmp_path)
    launched = Launched(project, user_env(tmp_path))
    wait_until(launched.sleeping, 180, "the script to run on the runtime")
    [cell] = _cell_pids(tmp_path)
    launched.proc.send_signal(stop)
    assert launched.proc.wait(timeout=120) == 128 + stop
    launched.reader.join(timeout=60)
    [stopped] = named(launched.events, "colab_session_stopped")
    assert stopped["verified"]
    assert ledger(tmp_path).held() == []
    assert "No active sessions found on server" in _listed(tmp_path)
    wait_until(lambda: not _alive(cell), 30, "the script to end with its runtime")


@pytest.mark.rotating("colab-e2e")
def test_after_sigkill_status_lists_the_session_and_teardown_stops_only_tpuwizards(tmp_path):
    project = make_project(tmp_path)
    env = user_env(tmp_path)
    launched = Launched(project, env)
    wait_until(launched.sleeping, 180, "the script to run on the runtime")
    session = named(launched.events, "colab_planned")[0]["session"]
    launched.proc.kill()
    launched.proc.wait(timeout=30)
    # A session of the user's own, made with the CLI, named like tpuwizard's: never touched.
    colab_env = dict(env, TPUWIZARD_COLAB_HOME=str(practice_home(tmp_path)))
    theirs = [sys.executable, "-m", "tpuwizard.sandbox.colab.cli", "new", "-s", "tpuwizard-mine"]
    subprocess.run([*theirs, "--tpu", "v5e1"], env=colab_env, check=True, capture_output=True)

    code, out, err = cli(project, env, "status", "--sandbox", "--json")
    assert code == 0, err
    [seen] = json.loads(out)["colab_sessions"]
    assert seen["session"] == session and seen["state"] == "running"
    # status and the stand-in agree: its cell still runs, and its record is not closed.
    state = json.loads((practice_home(tmp_path) / "state.json").read_text())
    [cell] = state["local"][session]["pids"]
    os.killpg(cell, 0)  # raises if nothing of the cell's group runs
    assert [r["kernel"] for r in ledger(tmp_path).held()] == [session]

    code, _, err = cli(project, env, "teardown", "tpuwizard-mine", "--sandbox", "--yes")
    assert "tpuwizard-mine" in _listed(tmp_path)  # not in the ledger: not tpuwizard's
    code, _, err = cli(project, env, "teardown", "--all", "--sandbox", "--yes")
    assert code == 0, err
    assert f"Stopped {session}: colab sessions no longer lists it." in err
    listed = _listed(tmp_path)
    assert session not in listed and "tpuwizard-mine" in listed
    assert ledger(tmp_path).held() == []
