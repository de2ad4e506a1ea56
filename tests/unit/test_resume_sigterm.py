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
from tpuwizard.core.errors import NodeGone, ScriptFailed
from tpuwizard.core.evidence.chain import CHAIN_FILE, check_chain
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.plan.parts import Resume
from tpuwizard.core.launch.resume.chain import AttemptEnd, NextStep, next_step
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
    )
    assert code == EXIT_OK
    kinds = [type(e).__name__ for e in events]
    assert ran_on[0] == first and len(ran_on) == 2
    if preempted:
        assert ran_on[1] != first and "KeptReplaced" in kinds and "RunningAgain" not in kinds
    else:
        assert ran_on == [first, first] and "RunningAgain" in kinds and "Recreating" not in kinds
