"""A script that writes its checkpoint flat into $TPUWIZARD_CHECKPOINTS (state.npy, meta.json,
then COMMITTED, overwritten in place) survives two preemptions on spot: the folder itself comes
home, goes back into the folder itself on each new node, and the run ends bit for bit where an
uninterrupted one does (before, only step folders came home and every attempt started over);
its last line names the resource made again for each attempt once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.launch_helpers import launch, ledger_all_gone, names, sandbox_is_empty

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("resume-e2e")

SCRIPT = Path(__file__).resolve().parent / "scripts" / "flat_checkpoints.py"
ARGS = ("--steps", "16", "--save-every", "4", "--step-seconds", "0.75")
# Preempted once worker 0 has saved twice on that node. The folder is rewritten in place, so a
# copy pass (every 1 s) must end between two saves: 3 s apart leaves it the time.
PREEMPT_TWICE = "preempt_on=.tpuwizard/work/saved/*;preempt_on_count=2;preempt_times=2"


def test_a_flat_checkpoint_folder_survives_two_preemptions_bit_for_bit(tmp_path, home):
    alone = tmp_path / "alone"
    alone.mkdir()
    whole = subprocess.run(
        [sys.executable, str(SCRIPT), *ARGS[:4]],
        cwd=alone,
        env={**os.environ, "TPUWIZARD_CHECKPOINTS": "ckpt", "TPUWIZARD_RESUME": ""},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()[-1]
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(SCRIPT, job / "train.py")
    code, events, stderr = launch(
        tmp_path,
        *("--accelerator", "v5litepod-4", "--route", "spot", "--script", str(job / "train.py")),
        *("--checkpoints", "ckpt", "--checkpoint-every", "1s", "--"),
        *ARGS,
        timeout=600,
        TPUWIZARD_SANDBOX_FAULTS=PREEMPT_TWICE,
        TPUWIZARD_SANDBOX_DELAY="0.05",
    )
    kinds = names(events)
    assert code == 0, (stderr, kinds)
    assert kinds.count("preempted") == 2 and "checkpoints_unusable" not in kinds
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines[-1] == whole
    resumed = [e for e in events if e["event"] == "resumed"]
    assert [e["attempt"] for e in resumed] == [2, 3]
    # Each attempt saved twice before its preemption, a copy pass between: the folder itself
    # came home and went back (a pass that overlapped a save is dropped whole, never used).
    from_folder = [e for e in resumed if e["checkpoint"] == "ckpt"]
    assert from_folder, [e["checkpoint"] for e in resumed]
    assert all(e["checkpoint"] in ("ckpt", None) for e in resumed)
    assert sum(line.startswith("resume: from step ") for line in lines) == len(from_folder)
    run_dir = Path(events[-1]["run_dir"])
    assert (run_dir / "checkpoints" / "ckpt" / "COMMITTED").is_file()
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    # The summary names the queued resource each attempt made again once (issue 56, item 7).
    said = " ".join(stderr.split())
    assert "-qr in us-central1-a (each of the 3 made) verified gone." in said, said
