"""orbax-checkpoint's own layout (orbax is in the test extra): steps a CheckpointManager wrote,
found and put back where orbax restores them; and examples/resumable_orbax.py killed mid-run,
its latest finished step copied home as tpuwizard copies it and put back into an
empty folder as on a new TPU, the resumed run ends bit for bit where an uninterrupted one does,
and where resumable_train.py ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import orbax.checkpoint as ocp
import pytest

from tpuwizard.core.remote import checkpoint_layouts as layouts
from tpuwizard.core.remote import checkpoints as ck
from tpuwizard.core.remote.transports import LocalTransport

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("resume-e2e")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ARGS = ["--steps", "20", "--save-every", "4"]


def env(folder: Path, resume: bool) -> dict[str, str]:
    out = {**os.environ, "JAX_PLATFORMS": "cpu", "TPUWIZARD_CHECKPOINTS": str(folder)}
    out.pop("TPUWIZARD_RESUME", None)
    if resume:
        out["TPUWIZARD_RESUME"] = "1"
    return out


def run(example: str, folder: Path, resume: bool = False) -> list[str]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / example), *ARGS],
        env=env(folder, resume),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout.splitlines()


def test_a_resumed_orbax_run_from_the_copied_step_ends_bit_for_bit(tmp_path: Path) -> None:
    whole = run("resumable_orbax.py", tmp_path / "whole")
    assert whole[-1] == run("resumable_train.py", tmp_path / "npz")[-1]  # the same loop
    # Preempted: SIGKILL once step 14 is printed (step 12's save is at least started).
    worker = tmp_path / "w0"
    folder = worker / "work" / "ckpt"
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "resumable_orbax.py"), *ARGS, "--step-seconds", "0.2"],
        env=env(folder, False),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for text in proc.stdout:
        if text.strip() == whole[13]:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    home = ck.CheckpointsHome(tmp_path / "home")
    home.copy_pass(LocalTransport([worker]), "work", sys.executable, "ckpt")
    chosen = home.latest()
    assert chosen is not None and chosen.step in (4, 8, 12)  # a finished step, never a tmp one
    fresh = tmp_path / "new-tpu"
    fresh.mkdir()
    ck.upload_set(LocalTransport([fresh]), home, chosen, "work/ckpt")
    resumed = run("resumable_orbax.py", fresh / "work" / "ckpt", resume=True)
    assert resumed[0] == f"resume: from step {chosen.step}"
    assert resumed[1] == whole[chosen.step]  # the step after it again, the same loss
    assert resumed[-1] == whole[-1]  # the final state's sha256


def test_orbax_checkpoint_manager_steps_written_by_orbax_come_home_and_restore(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "w0" / "work" / "ckpt"
    folder.mkdir(parents=True)
    state = {"w": np.arange(8, dtype=np.float32)}
    with ocp.CheckpointManager(folder, options=ocp.CheckpointManagerOptions(max_to_keep=2)) as m:
        for step in (1, 2, 3):
            m.save(step, args=ocp.args.StandardSave({"w": state["w"] * step}))
        m.wait_until_finished()
    # A step orbax has not finished: under its temporary name, never taken.
    (folder / "4.orbax-checkpoint-tmp-99").mkdir()
    (folder / "4.orbax-checkpoint-tmp-99" / "part").write_bytes(b"half")
    home = ck.CheckpointsHome(tmp_path / "home")
    taken = home.copy_pass(
        LocalTransport([folder.parents[1]]), "work", sys.executable, "ckpt"
    ).taken
    assert sorted(s.step for s in taken if s.step is not None) == [2, 3]
    assert {s.kind for s in taken} == {layouts.STEP_FOLDER}
    fresh = tmp_path / "new-tpu"
    fresh.mkdir()
    chosen = home.latest()
    assert chosen is not None and chosen.step == 3
    ck.upload_set(LocalTransport([fresh]), home, chosen, "work/ckpt")
    resumed = fresh / "work" / "ckpt"
    with ocp.CheckpointManager(resumed.resolve()) as again:
        assert again.latest_step() == 3
        back = again.restore(3, args=ocp.args.StandardRestore(state))
    assert back["w"].tolist() == (state["w"] * 3).tolist()
