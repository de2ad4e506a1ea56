"""examples/resumable_train.py alone: killed mid-run and resumed, it ends bit for bit where an
uninterrupted run ends, and it never reads back a folder without COMMITTED."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("resume-e2e")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "resumable_train.py"
ARGS = ["--steps", "25", "--save-every", "5"]


def env(folder: Path, resume: bool) -> dict[str, str]:
    out = {**os.environ, "JAX_PLATFORMS": "cpu", "TPUWIZARD_CHECKPOINTS": str(folder)}
    out.pop("TPUWIZARD_RESUME", None)
    if resume:
        out["TPUWIZARD_RESUME"] = "1"
    return out


def run(folder: Path, resume: bool = False) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *ARGS],
        env=env(folder, resume),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout.splitlines()


def killed_after(folder: Path, line: str) -> None:
    """Start a run and SIGKILL it once it printed ``line`` (as a preemption would)."""
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), *ARGS, "--step-seconds", "0.2"],
        env=env(folder, False),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for text in proc.stdout:
        if text.strip() == line:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_resumed_run_ends_bit_for_bit_where_an_uninterrupted_one_does(tmp_path: Path) -> None:
    whole = run(tmp_path / "whole")
    assert sum(t.startswith("step ") for t in whole) == 25
    killed_after(tmp_path / "cut", whole[11])
    resumed = run(tmp_path / "cut", resume=True)
    assert resumed[0] == "resume: from step 10"
    assert resumed[1] == whole[10]  # step 11 again, the same loss
    assert resumed[-1] == whole[-1]  # the final state's sha256


def test_a_folder_without_committed_is_never_read(tmp_path: Path) -> None:
    run(tmp_path)
    (tmp_path / "step_000025" / "COMMITTED").unlink()
    (tmp_path / "step_000025" / "state.npz").write_bytes(b"half-written")
    resumed = run(tmp_path, resume=True)
    assert resumed[0] == "resume: from step 20"
