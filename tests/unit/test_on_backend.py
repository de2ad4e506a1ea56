"""One move of a plan to another backend (issue 46): auto decided by Compute Engine's quota (the
session's pipeline before create) and advice naming the other backend both go through
``on_backend``, so neither leaves the watchdog on where Google keeps the deadline (a second copy
of the move once did, and every test of advice passed)."""

from __future__ import annotations

from pathlib import Path

from tests.plans import launch_plan
from tpuwizard.core.choices import Choice
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.advice import refused, with_choice
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.on_backend import on_backend
from tpuwizard.core.launch.plan.parts import Deadline, Where
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.preflight.model import passed
from tpuwizard.core.preflight.quota import QuotaReading
from tpuwizard.core.routes import Route
from tpuwizard.session.prepare.outcomes import GoOn, Outlook, Stage
from tpuwizard.session.prepare.stages import Pipeline

ZONE, PROJECT = "us-east5-a", "tpuwizard-practice"
V6E = parse_accelerator("v6e-4")


def kept_for_runs(tmp_path: Path) -> LaunchPlan:
    """What `up` plans on the TPU API: its watchdog on, 30 idle minutes."""
    return launch_plan(
        "v6e-4",
        ZONE,
        PROJECT,
        "r1",
        tmp_path / "r1",
        route=Route.SPOT,
        deadline=Deadline(watchdog=True, idle_minutes=30.0, keep=True),
    )


def test_a_plan_moved_to_compute_engine_has_no_watchdog_and_no_idle_time(tmp_path):
    plan = kept_for_runs(tmp_path)
    assert on_backend(plan, Backend.TPU_API) is plan
    moved = on_backend(plan, Backend.COMPUTE)
    assert (moved.backend, moved.watchdog, moved.deadline.idle_minutes) == (
        Backend.COMPUTE,
        False,
        None,
    )
    assert moved.problems() == []  # Google's max run duration is its deadline there
    back = on_backend(moved, Backend.TPU_API)
    assert back.backend is Backend.TPU_API and not back.watchdog  # nothing turned on unasked


def test_advice_naming_compute_engine_moves_the_plan_the_same_way(tmp_path):
    plan = kept_for_runs(tmp_path)
    (moved,) = with_choice(plan, Choice("backend", "compute"))
    assert moved == on_backend(plan, Backend.COMPUTE) and not moved.watchdog
    assert not refused(plan, Choice("backend", "compute"))  # so advice may name it


def test_the_pipeline_moves_auto_to_compute_engine_by_quota_without_the_watchdog(tmp_path):
    answers = LaunchAnswers(
        Where(V6E, ZONE, PROJECT, Route.SPOT), deadline=Deadline(keep=True, iterate=True)
    )
    reading = QuotaReading(passed("Quota", "covers 4 chips"), 64)
    found = Outlook(Route.SPOT, None, quota=reading)  # what a look ahead read
    pipe = Pipeline(answers, ("r1", tmp_path / "r1"), PROJECT, True, known=found)
    assert pipe.run_stages((Stage.BACKEND, Stage.DEFAULTS, Stage.PROBLEMS)) == GoOn()
    assert pipe.plan is not None and pipe.plan.watchdog and pipe.plan.deadline.idle_minutes == 30.0
    assert pipe.stage_preflight() == GoOn()  # a preview's: the look ahead's reading decides
    assert pipe.choice is not None and "covers 4 chips" in pipe.choice.reason
    plan = pipe.plan
    assert (plan.backend, plan.watchdog, plan.deadline.idle_minutes) == (
        Backend.COMPUTE,
        False,
        None,
    )
