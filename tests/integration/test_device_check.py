"""scripts/device-check.sh on this machine, which has no TPU: it says so in its one JSON and exits
1; with --allow-cpu its steps run on CPU devices as practice, and every file it writes is under
OUT (issue 45). The examples' step is tests/integration/test_program_measure.py's path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, clean_env


def _check(out, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = clean_env(OUT=str(out), PYTHON=sys.executable)
    env.pop("TPUWIZARD_TPU_TESTS", None)
    return subprocess.run(
        ["bash", "scripts/device-check.sh", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
    )


def test_without_a_tpu_it_says_so_and_exits_1(tmp_path):
    proc = _check(tmp_path / "out")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "out" / "device-check.json").read_text())
    assert report["tpu"] is False and report["ok"] is False
    assert report["why"].startswith("no TPU here: JAX sees 1 cpu device(s)")
    assert "verifier" not in report  # nothing ran as if it were a TPU


@pytest.mark.slow
def test_allow_cpu_runs_each_step_as_practice(tmp_path):
    out = tmp_path / "out"
    proc = _check(
        out, "--allow-cpu", "--skip", "examples", "--cache-layers", "2", "--cache-width", "128"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # practice is never a pass
    report = json.loads((out / "device-check.json").read_text())
    assert report["practice"] is True and report["slice"] == "v5litepod-1"
    assert report["steps_ok"] == {
        "verifier": True,
        "course": True,
        "compile_cache": True,
        "launcher": True,
    }
    # The launcher: the verifier through it, and a hung script's stack on SIGUSR1, still alive.
    launcher = report["launcher"]
    assert launcher["verifier_ok"] is True and launcher["stack_alive_after"] is True
    assert any("waiting_forever" in line for line in launcher["stack_lines"])
    assert report["course"]["tpu_setup"]["pmap_sum_of_squares"] == 140.0
    assert report["verifier"]["checks_passed"] == report["verifier"]["checks"] == 9
    cache = report["compile_cache"]
    assert cache["files_after_cold"] > 0 and cache["files_after_warm"] == cache["files_after_cold"]
    # At most 8 files come back from the chip machine's OUT: these four.
    assert sorted(os.listdir(out)) == [
        "device-check.json",
        "device-check.log",
        "launcher-receipt.json",
        "receipt.json",
    ]
