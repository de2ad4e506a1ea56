"""A practice Kaggle run killed outright (SIGKILL) leaves its kernel running in the stand-in, as
a killed client leaves a kernel running on Kaggle, until its session limit and no longer; and
`status` and `teardown`, run after it, say what the stand-in's kernel is doing: running until
when, and its page, while it runs; its record closed only once nothing of it runs."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.kaggle_helpers import cli, cli_env, named
from tests.waiting import wait_until
from tpuwizard.core.kaggle.ledger import KernelLedger

pytestmark = pytest.mark.slow

FOREVER = "import time\nprint('script started', flush=True)\nwhile True:\n    time.sleep(1)\n"
# The stand-in's session limit here (a fault), short of the pushed 2 minutes: long enough that
# the checks made while the kernel runs (a status and a teardown) end before it on a loaded
# machine (30 s did not: the kernel ended under the teardown's check, CI under load).
LIMIT_S = 90


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _state(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "session.json").read_text())
    except FileNotFoundError:
        return None


def _status(project: Path, env: dict[str, str]) -> dict:
    code, out, err = cli(project, env, "status", "--sandbox", "--json")
    assert code == 0, err
    [kernel] = json.loads(out)["kaggle_kernels"]
    return kernel


def test_a_killed_practice_run_leaves_its_kernel_to_its_limit_and_status_agrees(tmp_path, home):
    project = tmp_path / "project"
    project.mkdir()
    (project / "forever.py").write_text(FOREVER)
    env = cli_env(tmp_path, TPUWIZARD_KAGGLE_FAULTS=f"session_limit={LIMIT_S}")
    argv = ["launch", "--route", "kaggle", "--sandbox", "--json", "--script", "forever.py"]
    proc = subprocess.Popen(
        tpuwizard_cmd(*argv, "--max-run", "2"),
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    events: list[dict] = []
    reader = threading.Thread(
        target=lambda: events.extend(json.loads(line) for line in proc.stdout or ()), daemon=True
    )
    reader.start()
    group = None
    try:
        running = lambda: any(e["state"] == "RUNNING" for e in named(events, "kernel_state"))  # noqa: E731
        wait_until(running, 120, "the practice kernel to run")
        proc.kill()  # SIGKILL: no stop of tpuwizard's own runs
        assert proc.wait(timeout=30) < 0
        reader.join(timeout=60)
        [pushed] = named(events, "kernel_pushed")
        folder = home / "kaggle-sandbox" / "kernels" / pushed["kernel"].replace("/", "__") / "v1"
        state = wait_until(lambda: _state(folder), 60, "the keeper to start the kernel")
        group = state["group"]
        assert _group_alive(group)

        # While the stand-in's kernel runs, status says so, with when it ends and its page.
        kernel = _status(project, env)
        assert (kernel["state"], kernel["may_run"], kernel["gone"]) == ("RUNNING", True, False)
        assert kernel["ends_by"] == pytest.approx(state["ends_at"])
        assert kernel["url"] == pushed["url"] and kernel["process_group"] == group
        ledger = KernelLedger(home / "kaggle-ledger.jsonl")
        [record] = ledger.held()
        assert record["op"] == "pushed"  # never "deleted" while it runs
        # teardown cannot end it (nothing public cancels a session on Kaggle): exit 4, said.
        code, _, err = cli(project, env, "teardown", "--all", "--sandbox", "--yes")
        assert code == 4 and "not deleted: its session still runs" in err, err
        assert "left running until about" in err and pushed["url"] in err
        assert _group_alive(group) and ledger.held()

        # At its session limit the stand-in ends it (the script and the kernel), and status
        # then finds nothing of it and closes its record.
        wait_until(lambda: not _group_alive(group), LIMIT_S + 60, "the session limit")
        kernel = _status(project, env)
        assert kernel["gone"] and not kernel["may_run"] and kernel["state"] == "ERROR"
        [closed] = ledger.last_words().values()
        assert closed["op"] == "deleted" and "no process of its session runs" in closed["why"]
        assert json.loads((folder / "session.json").read_text())["failure"] == (
            f"the session reached its limit of {LIMIT_S} s"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
        if group is not None and _group_alive(group):
            os.killpg(group, 9)
