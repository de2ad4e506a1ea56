"""The Colab stand-in program answers as colab_cli 0.7.5's code does (docs/reference/colab-cli.md):
its words, its streams, its exit codes, and its faults. No JAX here: the cells are plain Python."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import clean_env
from tests.waiting import wait_until


@pytest.fixture
def colab(tmp_path):
    home = tmp_path / "colab"

    def run(*args: str, faults: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
        env = clean_env(TPUWIZARD_COLAB_HOME=str(home), TPUWIZARD_COLAB_FAULTS=faults)
        return subprocess.run(
            [sys.executable, "-m", "tpuwizard.sandbox.colab.cli", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp_path,
        )

    run.home = home  # type: ignore[attr-defined]
    return run


def test_a_session_made_listed_used_and_stopped_as_the_cli_says_it(colab, tmp_path):
    made = colab("new", "-s", "s1", "--tpu", "v5e1")
    assert made.returncode == 0
    assert made.stdout.splitlines() == [
        "[colab] Creating session 's1'...",
        "[colab] Session READY.",
    ]
    [line] = colab("sessions").stdout.splitlines()
    assert line.startswith("[s1] ") and line.endswith(
        "| Hardware: V5E1 | Shape: Standard | Variant: TPU"
    )
    (tmp_path / "data.txt").write_text("x")
    up = colab("upload", "-s", "s1", "data.txt", "content/data.txt")
    assert (
        up.returncode == 0
        and up.stdout.strip() == "[colab] Uploaded 'data.txt' to 'content/data.txt'"
    )
    assert colab("upload", "-s", "s1", ".", "content/x").returncode == 1  # one file only
    cell = tmp_path / "cell.py"
    cell.write_text(
        "import os\nprint(os.environ['K'], open('data.txt').read())\nopen('o.txt','w').write('1')\n"
        "raise ValueError('in the cell')\n"
    )
    ran = colab("exec", "-s", "s1", "-f", "cell.py", "--env", "K=v")
    # The cell's exception is on stderr and the exit code stays 0 (execution.py).
    assert ran.returncode == 0 and ran.stdout == "v x\n" and "ValueError" in ran.stderr
    assert colab("exec", "-s", "s1", "-f", "cell.py", "--env", "1K=v").returncode == 2
    got = colab("download", "-s", "s1", "content/o.txt", "o.txt")
    assert got.returncode == 0 and (tmp_path / "o.txt").read_text() == "1"
    missing = colab("download", "-s", "s1", "content/nope", "n")
    assert (
        missing.returncode == 1 and "Download failed: File or directory not found" in missing.stdout
    )
    assert colab("stop", "-s", "s1").stdout.splitlines()[-1] == "[colab] Session terminated."
    assert colab("sessions").stdout.strip() == "[colab] No active sessions found on server."
    again = colab("stop", "-s", "s1")
    assert again.returncode == 0 and again.stdout.strip() == "[colab] Session 's1' not found."
    assert colab("exec", "-s", "s1", "-f", "cell.py").returncode == 1
    assert colab("bogus").returncode == 2
    logged = [json.loads(x)["argv"][0] for x in (colab.home / "calls.log").read_text().splitlines()]
    assert logged[:3] == ["new", "sessions", "upload"] and logged[-1] == "bogus"


def test_an_exec_past_its_timeout_fails_while_its_cell_runs_on_until_stop(colab, tmp_path):
    colab("new", "-s", "s1", "--tpu", "v5e1")
    (tmp_path / "slow.py").write_text(
        "import time\nopen('begun','w').write('1')\ntime.sleep(120)\n"
    )
    started = time.monotonic()
    ran = colab("exec", "-s", "s1", "-f", "slow.py", "--timeout", "30", faults="exec_timeout=1")
    assert ran.returncode == 1 and "TimeoutError" in ran.stderr
    assert time.monotonic() - started < 30
    assert "BUSY" not in colab("status", "-s", "s1").stdout
    state = json.loads((colab.home / "state.json").read_text())
    [pid] = state["local"]["s1"]["pids"]  # still running in the "kernel"
    colab("stop", "-s", "s1")
    # The stop signals the cell's process group; under load the process ends a moment later.
    wait_until(lambda: not _running(pid), 30, "the cell's process to end after stop")


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_faults_no_tpu_signed_out_and_a_vanished_runtime(colab, tmp_path):
    refused = colab("new", "-s", "s1", "--tpu", "v5e1", faults="no_tpu")
    assert refused.returncode == 1 and "Allocation refused" in refused.stderr
    entitled = colab("new", "-s", "s1", "--tpu", "v5e1", faults="no_tpu=400")
    assert "Backend rejected accelerator 'V5E1'" in entitled.stderr
    out = colab("sessions", faults="signed_out")
    assert out.returncode == 1 and "To authorize colab-cli, visit this URL" in out.stderr
    assert "EOFError" in out.stderr
    colab("new", "-s", "s1", "--tpu", "v5e1")
    (tmp_path / "c.py").write_text("print(1)\n")
    lost = colab("exec", "-s", "s1", "-f", "c.py", faults="vanish_on_exec=1")
    assert lost.returncode == 1
    assert lost.stdout.strip() == "[colab] Session 's1' appears to be lost (404/401). Cleaning up."
    assert colab("sessions").stdout.strip() == "[colab] No active sessions found on server."
