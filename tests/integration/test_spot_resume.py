"""A spot run that survives preemption, end to end in the sandbox: examples/resumable_train.py
preempted once (fault preempt_after, preempt_times=1), resumed on a new node from the
checkpoint that came home, ends bit for bit where an uninterrupted run ends; every attempt's
node is verified gone, and the chain of attempts checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import launch, ledger_all_gone, names, sandbox_is_empty

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "resumable_train.py"
ARGS = ("--steps", "40", "--save-every", "4", "--step-seconds", "0.5")


def uninterrupted_final_line(tmp_path: Path) -> str:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "TPUWIZARD_CHECKPOINTS": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *ARGS[:4]],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return done.stdout.splitlines()[-1]


def test_one_preemption_resumes_from_the_copied_checkpoint_bit_for_bit(tmp_path, home):
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(EXAMPLE, job / "train.py")
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--route",
        "spot",
        "--script",
        str(job / "train.py"),
        "--checkpoints",
        "ckpt",
        "--checkpoint-every",
        "1s",
        "--",
        *ARGS,
        timeout=600,
        TPUWIZARD_SANDBOX_FAULTS="preempt_after=25;preempt_times=1",
    )
    kinds = names(events)
    assert code == 0, (stderr, kinds)
    assert kinds.count("preempted") == 1 and kinds.count("recreating") == 1
    assert kinds.count("teardown_verified") == 2  # the preempted node, then the last one
    assert kinds.index("preempted") < kinds.index("recreating") < kinds.index("resumed")
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines[-1] == uninterrupted_final_line(tmp_path)
    resumed = next(e for e in events if e["event"] == "resumed")
    run_dir = Path(events[-1]["run_dir"])
    if resumed["checkpoint"] is not None:  # preempted after a checkpoint came home
        assert f"resume: from step {resumed['step']}" in lines
        assert (run_dir / "checkpoints" / resumed["checkpoint"] / "COMMITTED").is_file()
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    chain = json.loads((run_dir / "chain.json").read_text())
    assert [a["ended"] for a in chain["attempts"]] == ["preempted", "finished"]
    assert chain["attempts"][1]["resumed_from"] == resumed["checkpoint"]
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(run_dir / "chain.json")),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # One changed byte in an entry breaks the chain.
    chain["attempts"][0]["zone"] = "us-west1-c"
    (run_dir / "chain.json").write_text(json.dumps(chain))
    tampered = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(run_dir / "chain.json")),
        capture_output=True,
        text=True,
    )
    assert tampered.returncode == 1 and "link" in tampered.stdout


def test_a_checkpoints_folder_outside_the_scripts_folder_exits_2_before_any_create(tmp_path, home):
    (tmp_path / "train.py").write_text("print('hi')\n")
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--route",
        "spot",
        "--script",
        str(tmp_path / "train.py"),
        "--checkpoints",
        "../elsewhere",
    )
    assert code == 2 and "'..'" in stderr
    assert "resource_exists" not in names(events) and sandbox_is_empty(home)
