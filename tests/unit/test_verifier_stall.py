"""The verifier's phase under the stall guard (issue 47 item 2's follow-up): a worker that hangs
before the user's script starts is caught as a hung script is, through the same launcher, and
the report names the verifier.

The worker is a local home (the sandbox's shell) whose verifier is a stand-in that waits without
a word and without CPU time, as a stuck import or a dead host does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import StalledIn, WorkersStalled
from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.launch.plan.parts import Guards
from tpuwizard.core.launch.workers.stall import StallReport, why_no_stack
from tpuwizard.core.remote.transports import REMOTE_DIR, LocalTransport
from tpuwizard.words.choice_words import all_words

HANGS = "import time\ntime.sleep(30)\n"  # no output, no CPU time: what the guard looks for


@pytest.fixture
def worker(tmp_path: Path) -> LocalTransport:
    home = tmp_path / "w0"
    venv = home / REMOTE_DIR / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    (home / REMOTE_DIR / VERIFIER_FILENAME).write_text(HANGS)
    return LocalTransport([home])


def test_a_verifier_that_hangs_is_ended_by_the_stall_guard_and_named(worker, tmp_path):
    run_dir = tmp_path / "launch"
    run_dir.mkdir()
    plan = launch_plan(
        "v5litepod-1", "us-central1-a", "p", "r1", run_dir, guards=Guards(stall_minutes=0.05)
    )
    events: list[object] = []
    ctx = LaunchContext(events.append, CancelToken(), LaunchState(plan.zone))
    steps = WorkerSteps(worker_input(plan, make_runtime(tmp_path, MemoryCloud())), ctx)
    with pytest.raises(WorkersStalled) as raised:
        steps.verify(worker)
    stalled = raised.value
    assert stalled.phase is StalledIn.VERIFIER and stalled.stalled == [0]
    assert stalled.lines[0].startswith("stalled in the verifier: w0 printed nothing")
    # It started through the launcher: its faulthandler answered with the verifier's frame.
    stack = next(line for line in stalled.lines if line.startswith("w0's stack: "))
    assert f"{VERIFIER_FILENAME}:2 in <module>" in stack, stalled.lines
    # Every frame is kept in the run folder, and the job was ended on the worker.
    kept = (run_dir / "verifier-stall.txt").read_text()
    assert "w0's Python stack:" in kept and f'{VERIFIER_FILENAME}", line 2' in kept, kept
    assert (worker.homes[0] / ".tpuwizard" / "jobs" / "verify-r1" / "exit").exists()


def test_the_diagnosis_names_the_verifier_and_the_front_ends_choice():
    report = StallReport(60, [1], {0: ["tpu_verify: expecting"], 1: []}, {}, [], [])
    report.phase = StalledIn.VERIFIER
    err = WorkersStalled([1], report.text(), report.lines(), StalledIn.VERIFIER)
    found = diagnose(err)
    assert found.title == "The verifier stalled"
    assert "before your script started" in found.explanation
    steps = all_words(found.next_steps, "wizard")
    assert "verifier-stall.txt" in " ".join(steps)
    assert any('"Stall guard" minutes on Review' in step for step in steps)
    assert "--stall-timeout MINUTES" in " ".join(all_words(found.next_steps, "cli"))
    script = diagnose(WorkersStalled([1], "", []))
    assert script.title == "The script stalled" and "output.txt" in " ".join(
        all_words(script.next_steps, "cli")
    )


def test_a_suspended_verifier_is_said_as_the_verifier():
    from tpuwizard.core.launch.workers.stall import Probe

    stopped = Probe(10, {"42": "T"}, False, False, False)
    assert why_no_stack(stopped, StalledIn.VERIFIER) == (
        "no stack: its verifier is suspended (stopped), so it cannot answer"
    )
