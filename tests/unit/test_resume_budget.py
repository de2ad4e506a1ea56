"""--budget and --resume-from in the chain of attempts, with the attempts stood in for: each
"bills" a given number of minutes and then its node goes away (the chain's own logic runs)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.plans import changed, launch_plan
from tests.unit.test_launch_safety import ZONE, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import NodeGone
from tpuwizard.core.evidence.chain import CHAIN_FILE, check_chain, entry_sha256
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle import launch as lifecycle
from tpuwizard.core.launch.lifecycle.ending import Ending
from tpuwizard.core.launch.lifecycle.provision import ProvisionInput
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Resume, Workload
from tpuwizard.core.launch.plan.resume_rules import DELETE_ALLOWANCE_MINUTES
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.remote.checkpoints import CheckpointSet, CheckpointsHome, file_sha256
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

ACCELERATOR = "v5litepod-4"
PER_HOUR = cost.hourly(catalog.parse_accelerator(ACCELERATOR), "spot", ZONE) or 0.0


def spot_plan(tmp_path: Path, run_id: str = "r2", **changes: object) -> LaunchPlan:
    script = tmp_path / "job" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("print('hi')\n")
    base = launch_plan(
        accelerator=ACCELERATOR,
        zone=ZONE,
        project="practice-project",
        run_id=run_id,
        run_dir=tmp_path / "runs" / run_id,
        route="spot",
        name="tpu-a",
        workload=Workload(script=script),
        resume=Resume("ckpt"),
    )
    return changed(base, **changes)


def usd_for(minutes: float) -> float:
    return PER_HOUR * minutes / 60


def run_chain(monkeypatch, plan: LaunchPlan, billed_minutes: list[float], tmp_path: Path):
    """Run the launch; attempt n bills ``billed_minutes[n-1]`` and is preempted (the last one
    that has no entry finishes). Returns (code, events, what each attempt's create was given)."""
    made: list[ProvisionInput] = []
    resumed_from: list[str | None] = []

    def attempt(self: lifecycle.Launch, quiet_gone: bool = False, again: bool = False) -> int:
        made.append(self.provisioner.given)
        resume = self.workers.resume
        assert resume is not None
        resumed_from.append(resume.resume_from.name if resume.resume_from else None)
        n = len(made)
        now = time.time()
        minutes = billed_minutes[n - 1] if n <= len(billed_minutes) else 1.0
        self.state.resource = Resource(
            "queued", plan.project, ZONE, "tpu-a", plan.accelerator, plan.run_id
        )
        self.state.created_at = self.state.costing_since = now - minutes * 60
        self.gone = (
            NodeGone("tpu-a", "PREEMPTED", "running", "preempted")
            if n <= len(billed_minutes)
            else None
        )
        return EXIT_CLOUD if self.gone else EXIT_OK

    def teardown(self: Ending, state=None) -> bool:
        state = state or self.state
        if state.resource is not None:
            state.gone_at, state.resource = time.time(), None
        return True

    monkeypatch.setattr(lifecycle.Launch, "attempt", attempt)
    monkeypatch.setattr(Ending, "teardown", teardown)
    events: list[ev.Event] = []
    code = lifecycle.run_launch(
        plan, make_runtime(tmp_path, MemoryCloud()), events.append, CancelToken()
    )
    return code, events, made, resumed_from


def test_each_attempt_gets_what_is_left_of_the_budget_and_none_starts_past_it(
    tmp_path, monkeypatch
):
    budget = round(usd_for(30 + DELETE_ALLOWANCE_MINUTES), 4)
    plan = spot_plan(tmp_path, resume=Resume("ckpt", budget_usd=budget))
    code, events, made, _ = run_chain(monkeypatch, plan, [15.0, 10.0], tmp_path)
    assert code == EXIT_CLOUD
    # The first attempt's deadline is what the budget buys, not --max-run's 120 minutes; the
    # second's what is left after the first billed 15 of them.
    assert [round(p.max_run_s / 60) for p in made] == [30, 15]
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert "--budget" in failed.diagnosis.explanation
    assert "--resume-from r2" in failed.diagnosis.explanation
    assert not any(isinstance(e, ev.Recreating) and e.attempt == 3 for e in events)
    chain = json.loads((plan.run_dir / CHAIN_FILE).read_text())
    assert chain["stopped"]["by"] == "budget" and len(chain["attempts"]) == 2
    facts, problems = check_chain(chain, plan.run_dir)
    assert problems == [] and any("budget" in f for f in facts)
    # Every attempt counted once: 25 minutes billed in all, within the budget.
    finished = events[-1]
    assert isinstance(finished, ev.Finished)
    assert finished.cost_usd == pytest.approx(usd_for(25), abs=0.01)
    assert finished.cost_usd is not None and finished.cost_usd <= budget
    planned = next(e for e in events if isinstance(e, ev.Planned))
    assert planned.budget_usd == budget
    assert "budget $" in describe(planned)[0]
    folded = RunSummary()
    for event in events:
        folded.apply(event)
    summary = summary_lines(folded)
    assert any("no new attempt: --budget would be passed" in line for line in summary), summary


def test_without_a_budget_the_chain_ends_by_max_restarts_and_says_so(tmp_path, monkeypatch):
    plan = spot_plan(tmp_path, resume=Resume("ckpt", max_restarts=1))
    code, events, made, _ = run_chain(monkeypatch, plan, [5.0, 5.0], tmp_path)
    assert code == EXIT_CLOUD and len(made) == 2
    assert made[0].max_run_s == pytest.approx(120 * 60, abs=6)
    chain = json.loads((plan.run_dir / CHAIN_FILE).read_text())
    assert chain["stopped"]["by"] == "max_restarts"
    assert events[-1].cost_usd == pytest.approx(usd_for(10), abs=0.01)  # type: ignore[attr-defined]


def earlier_run(tmp_path: Path, run_id: str = "r1") -> CheckpointSet:
    """A run folder as a preempted run leaves it: its chain, and a set that came home."""
    run_dir = tmp_path / "runs" / run_id
    made = CheckpointsHome(tmp_path / "made")  # where the set is written before it comes home
    (made.folder / "step_000008").mkdir(parents=True)
    (made.folder / "step_000008" / "state.npz").write_bytes(b"eight steps in")
    (made.folder / "step_000008" / "COMMITTED").write_text("8\n")
    files = {
        rel: {
            "size": (made.folder / "step_000008" / rel).stat().st_size,
            "mtime_ns": 1,
            "sha256": file_sha256(made.folder / "step_000008" / rel),
        }
        for rel in ("state.npz", "COMMITTED")
    }
    chosen = CheckpointsHome(run_dir / "checkpoints").take_from(
        made, CheckpointSet("step_000008", 8, files)
    )
    chain = {"kind": "chain", "run_id": run_id, "attempts": [{"attempt": 1, "ended": "gone"}]}
    (run_dir / CHAIN_FILE).write_text(json.dumps(chain))
    return chosen


def test_resume_from_puts_the_earlier_runs_set_first_and_links_the_chains(tmp_path, monkeypatch):
    earlier_run(tmp_path)
    plan = spot_plan(tmp_path, resume=Resume("ckpt", from_run="r1"))
    code, _, _, resumed_from = run_chain(monkeypatch, plan, [], tmp_path)
    assert code == EXIT_OK and resumed_from == ["step_000008"]
    copied = plan.run_dir / "checkpoints" / "step_000008" / "state.npz"
    assert copied.read_bytes() == b"eight steps in"
    chain = json.loads((plan.run_dir / CHAIN_FILE).read_text())
    first = chain["attempts"][0]
    earlier = json.loads((tmp_path / "runs" / "r1" / CHAIN_FILE).read_text())
    assert first["earlier_run"] == {
        "run_id": "r1",
        "last_entry_sha256": entry_sha256(earlier["attempts"][-1]),
    }
    assert first["resumed_from"] == "step_000008"
    facts, problems = check_chain(chain, plan.run_dir)
    assert problems == [] and any("run r1" in f for f in facts)
    earlier["attempts"][0]["ended"] = "preempted"  # the earlier chain edited afterwards
    (tmp_path / "runs" / "r1" / CHAIN_FILE).write_text(json.dumps(earlier))
    assert any("r1" in p for p in check_chain(chain, plan.run_dir)[1])


def test_a_set_changed_at_home_is_refused_before_it_is_put_back(tmp_path, monkeypatch):
    earlier_run(tmp_path)
    (tmp_path / "runs" / "r1" / "checkpoints" / "step_000008" / "state.npz").write_bytes(
        b"eight steps IN"  # the same size: the plan's check passes, the sha256 does not
    )
    plan = spot_plan(tmp_path, resume=Resume("ckpt", from_run="r1"))
    code, events, made, _ = run_chain(monkeypatch, plan, [], tmp_path)
    assert code != EXIT_OK and made == []  # no attempt, so nothing was created
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert "sha256" in failed.diagnosis.explanation


@pytest.mark.parametrize(
    ("resume", "said"),
    [
        (Resume("ckpt", from_run="nope"), "no run folder"),
        (Resume("ckpt", from_run="../r1"), "not an earlier run's id"),
        (Resume("ckpt", from_run="r0"), "no complete checkpoint set"),
        (Resume(from_run="r1"), "add --checkpoints"),
        (Resume("ckpt", budget_usd=0.01), "an attempt needs 10"),
        (Resume("ckpt", budget_usd=-1.0), "positive number"),
        (Resume("ckpt", budget_usd=float("nan")), "positive number"),
        (Resume(budget_usd=5.0), "add --checkpoints"),
    ],
)
def test_bad_budgets_and_runs_to_resume_are_refused_before_any_call(tmp_path, resume, said):
    earlier_run(tmp_path)
    (tmp_path / "runs" / "r0").mkdir()  # a run folder with nothing come home
    problems = [str(p) for p in spot_plan(tmp_path, resume=resume).problems()]
    assert any(said in p for p in problems), problems


def test_a_set_with_a_file_gone_is_refused_by_the_plan(tmp_path):
    earlier_run(tmp_path)
    (tmp_path / "runs" / "r1" / "checkpoints" / "step_000008" / "state.npz").unlink()
    problems = [
        str(p) for p in spot_plan(tmp_path, resume=Resume("ckpt", from_run="r1")).problems()
    ]
    assert any("lacks state.npz" in p for p in problems), problems


# -- issue 48, item 8: a guard on money never runs on a figure it cannot trust ------------------
class _Poisoned:
    """Installed prices that give one figure for every slice (a poisoned read, had it passed)."""

    def __init__(self, hourly: float) -> None:
        self.hourly = hourly

    def zone_price(self, slice_, route, zone):
        return cost.ZonePrice(self.hourly, "", None, "Cloud Billing Catalog, read 2026-12-01")

    def source(self) -> str:
        return "a poisoned read"

    def brief(self) -> str:
        return "a poisoned read"


@pytest.mark.parametrize("hourly", [float("nan"), -20.0, 0.0, float("inf")])
def test_a_budget_is_never_held_by_a_figure_that_is_no_price(tmp_path, monkeypatch, hourly):
    monkeypatch.setattr(cost, "_catalog", _Poisoned(hourly))
    problems = [
        str(p) for p in spot_plan(tmp_path, resume=Resume("ckpt", budget_usd=1.0)).problems()
    ]
    (problem,) = [p for p in problems if "--budget" in p]
    assert "--budget cannot be held" in problem and "is not a usable figure" in problem, problem
    assert "give --budget -" not in problem


def test_a_price_lost_before_the_first_attempt_creates_nothing(tmp_path, monkeypatch):
    """The plan's check passed; the chain finds no usable price when it starts: nothing is
    made, exit 2, said as the plan's problem."""
    from tpuwizard.core.exit_codes import EXIT_BAD_INPUT
    from tpuwizard.core.launch.resume import chain as resume_chain

    monkeypatch.setattr(resume_chain, "budget_minutes", lambda *args: None)
    plan = spot_plan(tmp_path, resume=Resume("ckpt", budget_usd=round(usd_for(60), 4)))
    code, events, made, _ = run_chain(monkeypatch, plan, [], tmp_path)
    assert code == EXIT_BAD_INPUT and made == []
    failed = next(e for e in events if isinstance(e, ev.Failed))
    assert failed.stage == "plan" and "--budget cannot be checked" in str(failed.diagnosis)


def test_a_price_lost_between_attempts_starts_no_new_one(tmp_path, monkeypatch):
    from tpuwizard.core.launch.plan import resume_rules
    from tpuwizard.core.launch.resume import chain as resume_chain

    calls = []

    def priced_once(*args):
        calls.append(args)
        return resume_rules.budget_minutes(*args) if len(calls) == 1 else None

    monkeypatch.setattr(resume_chain, "budget_minutes", priced_once)
    plan = spot_plan(tmp_path, resume=Resume("ckpt", budget_usd=round(usd_for(60), 4)))
    code, _, made, _ = run_chain(monkeypatch, plan, [5.0], tmp_path)
    assert code == EXIT_CLOUD and len(made) == 1  # preempted once, and no second TPU
    chain = json.loads((plan.run_dir / CHAIN_FILE).read_text())
    assert chain["stopped"]["by"] == "unpriced"
    assert "no usable price is known now" in chain["stopped"]["detail"]
