"""A spot run that survives preemption, end to end in the sandbox: examples/resumable_train.py
preempted twice (fault preempt_on: once worker 0 holds two committed sets), resumed each time
on a new node from the checkpoint that came home, ends bit for bit where an uninterrupted run
ends; every attempt's node is verified gone, and the chain of attempts checks."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import launch, ledger_all_gone, names, sandbox_is_empty

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("resume-e2e")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "resumable_train.py"
ARGS = ("--steps", "8", "--save-every", "2", "--step-seconds", "0.6")
# Preempted once two sets are committed on worker 0: each attempt saves at least one set first,
# and 1.2 s between saves leaves a copy pass (every 1 s) the time to bring one home.
PREEMPT_TWICE = "preempt_on=.tpuwizard/work/ckpt/*/COMMITTED;preempt_on_count=2;preempt_times=2"


@functools.cache
def uninterrupted_final_line() -> str:
    """The last line of examples/resumable_train.py run here with ARGS, never interrupted (its
    final state's sha256); once per session, shared by the tests that resume."""
    folder = Path(tempfile.mkdtemp(prefix="uninterrupted-"))
    # With the JAX a practice worker runs (the table's default, in its shared environment where
    # one is built; else tpuwizard's own, as practice falls back): another JAX's float results
    # differ in their last bits.
    from tpuwizard.core.plan.jax_versions import DEFAULT
    from tpuwizard.sandbox.workers.envs import built_env, envs_folder
    from tpuwizard.sandbox.workers.python import WORKER_PYTHON

    env_folder = built_env(envs_folder(), WORKER_PYTHON, DEFAULT.version)
    python = str(env_folder / "bin" / "python") if env_folder is not None else sys.executable
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "TPUWIZARD_CHECKPOINTS": str(folder / "c")}
    env.pop("TPUWIZARD_RESUME", None)
    try:
        done = subprocess.run(
            [python, str(EXAMPLE), *ARGS[:4]],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return done.stdout.splitlines()[-1]


def test_two_preemptions_resume_from_the_copied_checkpoints_bit_for_bit(tmp_path, home):
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
        TPUWIZARD_SANDBOX_FAULTS=PREEMPT_TWICE,
        TPUWIZARD_SANDBOX_DELAY="0.05",
    )
    kinds = names(events)
    assert code == 0, (stderr, kinds)
    assert kinds.count("preempted") == 2 and kinds.count("recreating") == 2
    assert kinds.count("teardown_verified") == 3  # each preempted node, then the last one
    assert kinds.index("preempted") < kinds.index("recreating") < kinds.index("resumed")
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines[-1] == uninterrupted_final_line()
    resumed = [e for e in events if e["event"] == "resumed"]
    assert [e["attempt"] for e in resumed] == [2, 3]
    run_dir = Path(events[-1]["run_dir"])
    for each in resumed:
        if each["checkpoint"] is not None:  # preempted after a checkpoint came home
            assert f"resume: from step {each['step']}" in lines
            assert (run_dir / "checkpoints" / each["checkpoint"] / "COMMITTED").is_file()
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    checked_text = (run_dir / "chain.json").read_text()
    chain = json.loads(checked_text)
    assert [a["ended"] for a in chain["attempts"]] == ["preempted", "preempted", "finished"]
    assert [a["resumed_from"] for a in chain["attempts"][1:]] == [e["checkpoint"] for e in resumed]
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
    # The last attempt has no entry after it to link it: the chain's own seal covers it.
    chain["attempts"][0]["zone"] = json.loads(checked_text)["attempts"][0]["zone"]
    chain["attempts"][-1]["script_exit"] = 1
    (run_dir / "chain.json").write_text(json.dumps(chain))
    tampered = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(run_dir / "chain.json")),
        capture_output=True,
        text=True,
    )
    assert tampered.returncode == 1 and "chain_sha256 does not match" in tampered.stdout
    # The run folder checks by its chain: gone, it is never "valid" from the last receipt alone.
    (run_dir / "chain.json").unlink()
    folder = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(run_dir)), capture_output=True, text=True
    )
    assert folder.returncode == 1 and "its chain of attempts is missing" in folder.stdout
    assert f"{run_dir / 'chain.json'}: REJECTED" in folder.stdout


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


def test_on_compute_engine_a_preempted_spot_vm_is_simply_gone_and_the_run_resumes(tmp_path, home):
    """A SPOT VM with instanceTerminationAction DELETE: preempted, it is deleted by Google (no
    PREEMPTED state to read), and the chain goes on from the checkpoint that came home (or from
    the start, when the preemption came before the script saved: the path is the same)."""
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(EXAMPLE, job / "train.py")
    args = ("--steps", "12", "--save-every", "2", "--step-seconds", "0.3")
    code, events, stderr = launch(
        tmp_path,
        *("--backend", "compute", "--accelerator", "v6e-1", "--route", "spot", "--no-preflight"),
        *("--script", str(job / "train.py"), "--checkpoints", "ckpt", "--checkpoint-every", "2s"),
        "--",
        *args,
        where=("--zone", "us-east5-b"),
        timeout=600,
        TPUWIZARD_SANDBOX_DELAY="0.05",
        TPUWIZARD_SANDBOX_FAULTS="preempt_after=6;preempt_times=1",
    )
    kinds = names(events)
    assert code == 0, (stderr, kinds)
    preempted = next(e for e in events if e["event"] == "preempted")
    assert preempted["state"] is None  # gone, not PREEMPTED: Compute Engine deleted it
    assert kinds.count("recreating") == 1 and kinds.count("teardown_verified") == 2
    assert [e["text"] for e in events if e["event"] == "script_line"][-1].startswith(
        "final step 12 "
    )
    run_dir = Path(events[-1]["run_dir"])
    chain = json.loads((run_dir / "chain.json").read_text())
    assert [a["ended"] for a in chain["attempts"]] == ["gone", "finished"]
    assert sandbox_is_empty(home) and ledger_all_gone(home)


HANDLER = Path(__file__).resolve().parent / "scripts" / "sigterm_train.py"
HANDLER_ARGS = ("--steps", "20", "--save-every", "5", "--step-seconds", "0.5")


def test_autocheckpoints_sigterm_resumes_on_the_same_node_from_the_handlers_save(tmp_path, home):
    """Issue 56 item 4: the guide's handler saves on SIGTERM and exits 0; that is never the
    run's end: the node is READY, so the script runs again there from the set it saved."""
    alone = tmp_path / "alone"
    alone.mkdir()
    whole = subprocess.run(
        [sys.executable, str(HANDLER), *HANDLER_ARGS[:4]],
        cwd=alone,
        env={**os.environ, "TPUWIZARD_CHECKPOINTS": "ckpt", "TPUWIZARD_RESUME": ""},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()[-1]
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(HANDLER, job / "train.py")
    code, events, stderr = launch(
        tmp_path,
        *("--accelerator", "v5litepod-1", "--route", "spot", "--script", str(job / "train.py")),
        *("--checkpoints", "ckpt", "--checkpoint-every", "1s", "--"),
        *HANDLER_ARGS,
        timeout=600,
        TPUWIZARD_SANDBOX_FAULTS="maintenance_sigterm=4",
        TPUWIZARD_SANDBOX_DELAY="0.05",
    )
    kinds = names(events)
    assert code == 0, (stderr, kinds)
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    saved = next(line for line in lines if line.startswith("SIGTERM: saved step "))
    step = int(saved.split()[3].rstrip(","))
    assert 0 < step < 20
    (again,) = [e for e in events if e["event"] == "running_again"]
    assert again["attempt"] == 2 and again["workers"] == [0]
    assert again["resume_from"] == f"step_{step:06d}"  # the handler's own save came home
    assert f"resume: from step {step}" in lines and lines[-1] == whole
    # The same node: one create, one teardown at the end, no preemption.
    assert kinds.count("resource_exists") == 1 and kinds.count("teardown_verified") == 1
    assert "preempted" not in kinds and "recreating" not in kinds and "failed" not in kinds
    finished = [e for e in events if e["event"] == "script_finished"]
    assert [(e["exit_code"], e["sigterm"]) for e in finished] == [(0, [0]), (0, [])]
    run_dir = Path(events[-1]["run_dir"])
    chain = json.loads((run_dir / "chain.json").read_text())
    assert [a["ended"] for a in chain["attempts"]] == ["sigterm", "finished"]
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(run_dir / "chain.json")),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)
