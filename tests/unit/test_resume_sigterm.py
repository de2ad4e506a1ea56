"""A spot run whose script got a SIGTERM tpuwizard saw (its job's wrapper recorded passing it on:
Autocheckpoint's warning before maintenance) is never done: it runs again from its last
checkpoint, on the same node while the listing says READY, on a new one once it is gone, within
--max-restarts (issue 56, item 4). First the rule alone, then a launch's whole chain against the
in-memory cloud with the script's runs stood in for (their exit code, the workers whose job
recorded a SIGTERM, and whether Google took the node meanwhile)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud
from tests.unit import test_kept_resume
from tests.unit.test_kept_resume import script, up
from tests.unit.test_launch_safety import ZONE, make_runtime
from tests.unit.test_resume_budget import spot_plan
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.errors import NodeGone, ScriptFailed
from tpuwizard.core.evidence.chain import CHAIN_FILE, check_chain
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.plan.parts import Resume
from tpuwizard.core.launch.resume.chain import AttemptEnd, NextStep, next_step
from tpuwizard.core.launch.workers.held_chip import ChipHeld, Holder
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.session.kept.nodes import KeptNode
from tpuwizard.session.kept.resume import CheckpointsAsked
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

world = test_kept_resume.world  # the practice session over the in-memory cloud, a fixture here too
GONE = NodeGone("tpu-a-qr", "PREEMPTED", "during the script step", "preempted")


def end(code: int, sigterm: tuple[int, ...], gone: bool = False, stopped: bool = False):
    return AttemptEnd(code, GONE if gone else None, ZONE, "tpu-a-qr", None, code, stopped, sigterm)


@pytest.mark.parametrize(
    ("attempt", "step"),
    [
        (end(0, (0,)), NextStep.SAME_NODE),  # a handler saved and exited 0: not finished
        (end(143, (0,)), NextStep.SAME_NODE),  # no handler: it died of the signal
        (end(143, (1,)), NextStep.SAME_NODE),  # on one worker of a slice
        (end(143, ()), NextStep.ENDS),  # exit 143 of its own, no SIGTERM seen: its failure
        (end(0, ()), NextStep.ENDS),  # finished
        (end(1, ()), NextStep.ENDS),  # failed
        (end(0, (0,), gone=True), NextStep.NEW_NODE),  # the maintenance took the node
        (end(EXIT_CLOUD, (), gone=True), NextStep.NEW_NODE),  # preempted under it
        (end(143, (0,), stopped=True), NextStep.ENDS),  # a stop's SIGTERM: the stop ends it
    ],
)
def test_what_follows_an_attempt(attempt: AttemptEnd, step: NextStep) -> None:
    assert next_step(attempt) is step


def chain_of(tmp_path, monkeypatch, runs: list[tuple[int, tuple[int, ...], bool]], **plan_changes):
    """A launch --checkpoints whose script runs end as ``runs`` say, each (exit code, workers
    whose job recorded a SIGTERM, node preempted before it ended); the script's run after the
    last finishes. Returns (code, events, cloud, run folder)."""
    cloud = MemoryCloud()
    monkeypatch.setattr(WorkerSteps, "bootstrap", lambda self, transport: None)
    monkeypatch.setattr(
        WorkerSteps, "verify", lambda self, transport: setattr(self, "receipt_ok", True)
    )
    left = list(runs)

    def run_script(self: WorkerSteps, transport: object) -> None:
        code, sigterm, preempted = left.pop(0) if left else (0, (), False)
        self.script_exit_code, self.script_sigterm = code, sigterm
        node = self.state.node
        assert node is not None
        if preempted:  # Google takes the VM after its warning
            cloud.nodes[(ZONE, node.name)] = replace(node, state="PREEMPTED", endpoints=())
        if code:
            raise ScriptFailed(code)

    monkeypatch.setattr(WorkerSteps, "run_script", run_script)
    plan = spot_plan(tmp_path, **plan_changes)
    events: list[ev.Event] = []
    code = run_launch(plan, make_runtime(tmp_path, cloud), events.append, CancelToken())
    return code, events, cloud, plan.run_dir


def endings(run_dir) -> list[str]:
    return [a["ended"] for a in json.loads((run_dir / CHAIN_FILE).read_text())["attempts"]]


@pytest.mark.parametrize("exit_code", [0, 143])
def test_a_sigterm_on_a_ready_node_runs_the_script_again_there(tmp_path, monkeypatch, exit_code):
    code, events, cloud, run_dir = chain_of(tmp_path, monkeypatch, [(exit_code, (0,), False)])
    assert code == EXIT_OK
    again = [e for e in events if isinstance(e, ev.RunningAgain)]
    assert [(e.attempt, e.workers) for e in again] == [(2, (0,))]
    assert "Your script got SIGTERM on worker 0 before it finished" in describe(again[0])[0]
    # The same node: one create, no preemption said, no Failed for the script's exit 143.
    assert cloud.count("create_queued") == 1
    assert not [e for e in events if isinstance(e, (ev.Preempted, ev.Recreating, ev.Failed))]
    assert endings(run_dir) == ["sigterm", "finished"]
    chain = json.loads((run_dir / CHAIN_FILE).read_text())
    assert check_chain(chain, run_dir)[1] == []  # "sigterm" is an ending another may follow
    summary = RunSummary()
    for event in events:
        summary.apply(event)
    assert "    1 in us-central1-a: got SIGTERM" in summary_lines(summary)


def test_a_sigterm_then_the_node_gone_makes_a_new_one(tmp_path, monkeypatch):
    code, events, cloud, run_dir = chain_of(tmp_path, monkeypatch, [(0, (0,), True)])
    assert code == EXIT_OK
    names = [type(e).__name__ for e in events]
    assert "Preempted" in names and "Recreating" in names and "RunningAgain" not in names
    assert cloud.count("create_queued") == 2
    assert endings(run_dir) == ["preempted", "finished"]


def test_exit_143_without_a_sigterm_seen_is_the_scripts_failure(tmp_path, monkeypatch):
    code, events, _, run_dir = chain_of(tmp_path, monkeypatch, [(143, (), False)])
    assert code == EXIT_FAILED
    (failed,) = [e for e in events if isinstance(e, ev.Failed)]
    assert failed.stage == "script" and "RunningAgain" not in [type(e).__name__ for e in events]
    assert endings(run_dir) == ["failed"]


@pytest.mark.parametrize("exit_code", [0, 143])
def test_a_sigterm_with_the_restarts_spent_is_a_failure_never_done(
    tmp_path, monkeypatch, exit_code
):
    code, events, _, run_dir = chain_of(
        tmp_path, monkeypatch, [(exit_code, (0,), False)], resume=Resume("ckpt", max_restarts=0)
    )
    assert code == EXIT_CLOUD
    (failed,) = [e for e in events if isinstance(e, ev.Failed)]
    assert failed.diagnosis.title == (
        "Your script got SIGTERM on worker 0 before it finished; "
        "no new attempt: --max-restarts used up"
    )
    assert "(the last: SIGTERM), and --max-restarts allows 0" in failed.diagnosis.explanation
    assert not any(isinstance(e, ev.RunningAgain) for e in events)
    chain = json.loads((run_dir / CHAIN_FILE).read_text())
    assert [a["ended"] for a in chain["attempts"]] == ["sigterm"]  # not "finished", nor failed
    assert chain["stopped"]["by"] == "max_restarts"


def run_checkpoints(session, tmp_path, even_if_held: bool = False) -> tuple[int, list[ev.Event]]:
    """`run --checkpoints ckpt` of the kept node (its runs stood in for by the test): the exit
    code and the events."""
    events: list[ev.Event] = []
    train = script(tmp_path)
    code = session.kept.open(None).run(
        train,
        (),
        (),
        LocalFolder.of_script(train),
        events.append,
        CancelToken(),
        checkpoints=CheckpointsAsked("ckpt", 60.0, 3),
        even_if_held=even_if_held,
    )
    return code, events


@pytest.mark.parametrize(("exit_code", "preempted"), [(0, False), (143, False), (0, True)])
def test_run_checkpoints_on_a_kept_node_follows_the_same_rule(
    world,
    tmp_path,
    monkeypatch,
    exit_code,
    preempted,
):
    """`run --checkpoints` on a kept spot node: a SIGTERM its job recorded runs the script
    again on that node while it is READY; once Google took it, on a new one made from up's
    settings."""
    cloud, session = world
    first = up(session, tmp_path)
    ran_on: list[str] = []

    def run_once(self: KeptNode, plan, folder, emit, cancel):
        ran_on.append(self.name)
        if len(ran_on) == 1:
            if preempted:
                node = cloud.nodes[(ZONE, self.name)]
                cloud.nodes[(ZONE, self.name)] = replace(node, state="PREEMPTED")
            emit(ev.ScriptFinished(exit_code, None, (0,)))
            return (EXIT_OK if exit_code == 0 else EXIT_FAILED), None
        emit(ev.ScriptFinished(0))
        return EXIT_OK, None

    monkeypatch.setattr(KeptNode, "run_once", run_once)
    code, events = run_checkpoints(session, tmp_path)
    assert code == EXIT_OK
    kinds = [type(e).__name__ for e in events]
    assert ran_on[0] == first and len(ran_on) == 2
    if preempted:
        assert ran_on[1] != first and "KeptReplaced" in kinds and "RunningAgain" not in kinds
    else:
        assert ran_on == [first, first] and "RunningAgain" in kinds and "Recreating" not in kinds


HOLDER = Holder(0, 4242, "python hold.py", ("/dev/vfio/0",), None)


def held_diagnosis(events: list[ev.Event], node: str) -> Diagnosis:
    """The one Failed of a chain that ended on a held chip, said as the chip's own words are:
    who holds it, where the script was to run again."""
    (failed,) = [e for e in events if isinstance(e, ev.Failed)]
    d = failed.diagnosis
    assert (failed.stage, d.kind, d.title) == (
        "script",
        "tpu_held",
        "Another process holds the TPU",
    )
    assert f"was to run again on {node}" in d.explanation
    assert "process 4242 on worker 0" in d.explanation
    assert "worker 0: process 4242 (python hold.py)" in d.next_steps
    return d


@pytest.mark.parametrize("held", [None, "other", "unended"])
def test_before_a_launchs_script_runs_again_on_its_node_the_chip_is_checked(
    tmp_path, monkeypatch, held
):
    """The same-node attempt checks the chip first (a holder of ours is ended there:
    held_chip.py; None here); another's, or one of ours SIGKILL did not end, ends the chain
    with the script not run again, and the launch deletes its node as after any failure."""
    checks: list[bool] = []

    def check_chip(self: WorkerSteps, transport: object, even_if_held: bool) -> None:
        checks.append(even_if_held)
        if held is not None:
            raise ChipHeld("tpu-a", [HOLDER], unended=held == "unended")

    monkeypatch.setattr(WorkerSteps, "check_chip", check_chip)
    code, events, cloud, run_dir = chain_of(tmp_path, monkeypatch, [(0, (0,), False)])
    assert checks == [False]  # once: before the second run, not before the first
    assert sum(isinstance(e, ev.RunningAgain) for e in events) == 1
    if held is None:
        assert code == EXIT_OK and endings(run_dir) == ["sigterm", "finished"]
        return
    assert code == EXIT_FAILED
    d = held_diagnosis(events, "tpu-a")
    assert any("--resume-from" in str(step) for step in d.next_steps)
    assert endings(run_dir) == ["sigterm", "failed"]
    attempts = json.loads((run_dir / CHAIN_FILE).read_text())["attempts"]
    assert attempts[0]["script_exit"] == 0  # the first run's
    assert attempts[1]["script_exit"] is None  # not the first run's again: it did not run
    assert any(isinstance(e, ev.TeardownVerified) for e in events) and cloud.nodes == {}


def _sigterm_then_done(runs: list[str]):
    """A stand-in for the script's run on the node: the first gets Autocheckpoint's SIGTERM
    (the node stays READY), the next ends by itself."""

    def run_once(self: KeptNode, plan, folder, emit, cancel):
        runs.append(self.name)
        emit(ev.ScriptFinished(0, None, (0,) if len(runs) == 1 else ()))
        return EXIT_OK, None

    return run_once


@pytest.mark.parametrize("held", [None, "other", "unended"])
def test_before_the_script_runs_again_on_its_node_the_chip_is_checked(
    world, tmp_path, monkeypatch, held
):
    """The chain's second attempt on the same node (its script got SIGTERM, the node READY)
    checks the chip first, as `run` did before the first: a holder of ours is ended there
    (held_chip.py; None here), another's, or one of ours SIGKILL did not end, ends the chain
    with the node kept and the script not run again."""
    _, session = world
    node = up(session, tmp_path)
    runs: list[str] = []
    checks: list[bool] = []

    def check_chip(self: KeptNode, even_if_held, emit):
        checks.append(even_if_held)
        if held is not None and len(checks) == 2:
            holder = Holder(0, 4242, "python hold.py", ("/dev/vfio/0",), None)
            raise ChipHeld(self.name, [holder], unended=held == "unended")

    monkeypatch.setattr(KeptNode, "run_once", _sigterm_then_done(runs))
    monkeypatch.setattr(KeptNode, "check_chip", check_chip)
    code, events = run_checkpoints(session, tmp_path, even_if_held=True)
    assert checks == [True, True]  # before the run, and before it ran again; as asked
    assert sum(isinstance(e, ev.RunningAgain) for e in events) == 1
    assert isinstance(events[-1], ev.Finished) and events[-1].remaining == [node]
    if held is None:
        assert code == EXIT_OK and runs == [node, node]
        return
    assert code == EXIT_FAILED and runs == [node]  # not run again: JAX could not have started
    d = held_diagnosis(events, node)
    if held == "other":
        assert "which tpuwizard did not start" in d.explanation
        assert f"End it: tpuwizard ssh --node {node} --worker 0, then kill 4242." in d.next_steps
    else:
        assert "which SIGTERM and SIGKILL did not end" in d.explanation
        assert "tpuwizard down, then tpuwizard up, for a fresh node." in d.next_steps
