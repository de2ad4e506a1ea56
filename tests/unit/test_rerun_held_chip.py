"""The wizard's Run again checks who holds the TPU first (issue 54, item 3), as `run` does on a
kept node: the launch's own rerun loop (core/launch/workers/rerun.py), its worker steps and the
session's handle, with the real chip check and the real script runs on a local worker home (its
chip the practice stand-in file, held by a real process)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud, checked
from tests.plans import launch_plan
from tests.unit.test_launch_safety import ZONE, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.launch.workers.rerun import Reruns, run_script_with_reruns
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.sandbox.workers.chip import LEFT_JOB, STAND_IN_FILES, HeldChip, hold_chip
from tpuwizard.session.launch_handle import LaunchHandle
from tpuwizard.words.event_text import describe
from tpuwizard.words.held_chip_text import rerun_refused_verdict

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists from /proc")

RUN, ANYWAY, DONE = "run again", "run anyway", "tear down"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def rerun_with(tmp_path: Path, held: HeldChip, answers: list[str]) -> tuple[list[ev.Event], int]:
    """A launch's script run once, then again as ``answers`` say, each forwarded by the
    session's handle as the wizard's buttons forward them; worker 0's chip held from before the
    first run by ``held``'s process. Returns the events and the holder's pid."""
    home = tmp_path / "w0"
    (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    (home / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
    pid = hold_chip(home, held)
    assert pid is not None
    script = tmp_path / "lesson" / "train.py"
    script.parent.mkdir()
    script.write_text("print('ran', flush=True)\n")
    plan = launch_plan(
        "v5litepod-1", ZONE, "p", "r1", tmp_path / "runs", name="tpu-a", workload=Workload(script)
    )
    rt = make_runtime(tmp_path, MemoryCloud())
    rt.chip_files = STAND_IN_FILES
    events: list[ev.Event] = []
    state = LaunchState(plan.zone, node=NodeInfo("tpu-a", plan.zone, "v5litepod-1", "READY"))
    steps = WorkerSteps(worker_input(plan, rt), LaunchContext(events.append, CancelToken(), state))
    handle = LaunchHandle(None, checked(plan))  # type: ignore[arg-type]
    handle.reruns = Reruns()
    for answer in answers:
        if answer == DONE:
            handle.end_runs()
        else:
            handle.run_again("", even_if_held=answer == ANYWAY)
    run_script_with_reruns(steps, LocalTransport([home]), handle.reruns, None)
    return events, pid


def runs_of(events: list[ev.Event]) -> list[tuple[int, bool]]:
    """Each ScriptDone: its run's number, and whether it was refused as the TPU is held."""
    return [(e.run, e.chip_held is not None) for e in events if isinstance(e, ev.ScriptDone)]


def ran(events: list[ev.Event]) -> int:
    return sum(isinstance(e, ev.ScriptLine) and e.text == "ran" for e in events)


@pytest.mark.parametrize(
    "answers, done, times_ran",
    [
        # Run again: refused, nothing run; the choices come again, and tear down is one
        ([RUN, DONE], [(1, False), (2, True)], 1),
        # Run again refused, then Run anyway: the script runs, the holder is said and left
        ([RUN, ANYWAY, DONE], [(1, False), (2, True), (3, False)], 2),
        # Run anyway at once: no refusal
        ([ANYWAY, DONE], [(1, False), (2, False)], 2),
    ],
)
def test_another_s_holder_refuses_run_again_until_run_anyway(tmp_path, answers, done, times_ran):
    events, pid = rerun_with(tmp_path, HeldChip.OTHER, answers)
    try:
        assert runs_of(events) == done and ran(events) == times_ran
        assert alive(pid)  # never tpuwizard's to end
        going = [e for e in events if isinstance(e, ev.ChipHeldGoingOn)]
        assert [(e.node, e.worker, e.pid) for e in going] == [("tpu-a", 0, pid)] * (
            ANYWAY in answers
        )
        for refused in [e for e in events if isinstance(e, ev.ScriptDone) and e.chip_held]:
            held = refused.chip_held
            assert held is not None and (held.node, held.unended) == ("tpu-a", False)
            assert [(h.worker, h.pid) for h in held.holders] == [(0, pid)]
            assert held.holders[0].command.startswith(sys.executable)  # its command line
            assert refused.exit_code == 0 and refused.can_rerun  # the last run's result stands
            said = "\n".join(describe(refused, "wizard"))
            assert "tpu-a's TPU is held by a process tpuwizard did not start" in said
            assert f"press Shell (worker 0), then kill {pid}" in said
            assert "press Run anyway" in said and said.endswith("or tear down.")
    finally:
        os.kill(pid, signal.SIGKILL)


def test_an_earlier_run_s_holder_is_ended_before_run_again_and_said(tmp_path):
    events, pid = rerun_with(tmp_path, HeldChip.OURS, [RUN, DONE])
    assert runs_of(events) == [(1, False), (2, False)] and ran(events) == 2
    assert not alive(pid)
    (ended,) = [e for e in events if isinstance(e, ev.ChipHolderEnded)]
    assert (ended.pid, ended.job, ended.worker) == (pid, LEFT_JOB, 0)
    second_start = [i for i, e in enumerate(events) if isinstance(e, ev.ScriptLine)][1]
    assert events.index(ended) < second_start  # ended before the script ran again
    (line,) = describe(ended, "wizard")  # the words `run` says
    assert line.startswith(f"worker 0: ended process {pid} (") and "SIGTERM, then SIGKILL" in line


@pytest.mark.parametrize(
    "refusal, said",
    [
        (
            ev.ChipHeldRefusal("tpu-a", (ev.ChipHolding(0, 77, "x"), ev.ChipHolding(1, 88, ""))),
            "Your script did not run: process 77 on worker 0 and process 88 on worker 1 hold the "
            "TPU, and tpuwizard did not start them (only one process at a time may use a TPU). "
            "End them (the log says how), then Run again; or Run anyway (your script may fail to "
            "start JAX); or Tear down.",
        ),
        (
            ev.ChipHeldRefusal("tpu-a", (ev.ChipHolding(0, 42, "python"),), unended=True),
            "Your script did not run: tpu-a's TPU is still held by a process an earlier run "
            "left, which SIGKILL did not end. Tear down, then launch again.",
        ),
    ],
)
def test_the_script_step_says_why_the_rerun_did_not_run(refusal, said):
    assert rerun_refused_verdict(refusal) == said
    # The words offer Run anyway exactly where the screen shows it (the refusal's own rule).
    assert refusal.going_on_passes is ("Run anyway" in said)
