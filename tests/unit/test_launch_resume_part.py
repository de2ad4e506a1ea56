"""The Resume part (core/launch/plan/parts.py): carried whole from the answers to the plan, its
rules (resume_rules.py) taking it and what they read of the rest as arguments, and never in a
kept node's record (``run --checkpoints`` asks it anew for each run)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from tests.plans import launch_plan
from tests.unit.test_resume_budget import earlier_run
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_settings, replacement_answers
from tpuwizard.core.launch.plan.answers import LaunchAnswers
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan, plan_for_run
from tpuwizard.core.launch.plan.parts import Resume, Where
from tpuwizard.core.launch.plan.resume_rules import earlier_run_folder, resume_problems
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.routes import Route
from tpuwizard.words.choice_words import all_words


def test_the_answers_resume_reaches_the_plan_whole():
    resume = Resume("ckpt", 30.0, 2, 5.0, "r1", autocheckpoint=False)
    asked = LaunchAnswers(Where(parse_accelerator("v5litepod-4"), "us-central1-a"), resume=resume)
    plan = plan_for_run("r2", Path("/tmp/r2"), asked, Backend.TPU_API)
    assert plan.resume is resume


def test_no_resume_value_is_also_a_flat_field_of_the_answers_or_the_plan():
    parted = {f.name for f in fields(Resume)}
    for whole in (LaunchAnswers, LaunchPlan):
        assert parted.isdisjoint(f.name for f in fields(whole)), whole


def problems(tmp_path: Path, resume: Resume, **changes: Any) -> list[str]:
    """What resume_problems says of ``resume`` for a spot run of v5litepod-4 with a script and
    --max-run's default, run r2 in tmp_path/runs, ``changes`` aside, in the CLI's words."""
    script = tmp_path / "job" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("print('hi')\n")
    context: dict[str, Any] = {
        "slice_": parse_accelerator("v5litepod-4"),
        "accelerator": "v5litepod-4",
        "route": Route.SPOT,
        "zone": "us-central1-a",
        "script": script,
        "keep": False,
        "max_run": 120.0,
        "run_dir": tmp_path / "runs" / "r2",
        "run_id": "r2",
    }
    return all_words(resume_problems(resume, **{**context, **changes}), "cli")


@pytest.mark.parametrize(
    ("resume", "changes", "said"),
    [
        (Resume(), {}, []),  # not asked for: nothing to refuse
        (Resume("ckpt"), {}, []),
        (Resume("out/ckpt", 30.0, 0), {}, []),
        (Resume("ckpt", budget_usd=5.0), {}, []),
        (Resume("ckpt", from_run="r1"), {}, []),  # the set tmp_path/runs/r1 holds
        (Resume("ckpt"), {"max_run": None}, []),  # no deadline to check (an unknown route)
        (Resume(max_restarts=5), {}, ["--max-restarts is for a run that resumes"]),
        (
            Resume(budget_usd=5.0, from_run="r1"),
            {},
            ["--budget is for a run that resumes", "--resume-from is for a run that resumes"],
        ),
        (Resume("../ckpt"), {}, ["climbs out with '..'"]),
        (Resume("ckpt"), {"script": None}, ["give your script in --script"]),
        (Resume("ckpt"), {"route": Route.VM}, ["the vm route is not preempted that way"]),
        (Resume("ckpt"), {"keep": True}, ["--checkpoints with --keep is not supported"]),
        (Resume("ckpt", max_restarts=21), {}, ["--max-restarts must be 0 to 20, not 21"]),
        (Resume("ckpt"), {"max_run": 5.0}, ["A deadline of 5 minutes leaves no attempt"]),
        (Resume("ckpt", budget_usd=0.01), {}, ["an attempt needs 10"]),
        (Resume("ckpt", budget_usd=-1.0), {}, ["must be a positive number of US dollars"]),
        (
            Resume("ckpt", budget_usd=5.0),
            {"slice_": None, "accelerator": "v9-8"},
            ["no price is known for v9-8 on the spot route in us-central1-a"],
        ),
        (Resume("ckpt", from_run="r2"), {}, ["is not an earlier run's id"]),  # this run
        (Resume("ckpt", from_run="nope"), {}, ["there is no run folder"]),
        (Resume("ckpt", from_run="r0"), {}, ["no complete checkpoint set came home"]),
    ],
)
def test_each_resume_rule_reads_the_part_and_what_it_is_given(tmp_path, resume, changes, said):
    earlier_run(tmp_path)  # runs/r1: a set that came home whole
    (tmp_path / "runs" / "r0").mkdir()  # a run folder with nothing come home
    found = problems(tmp_path, resume, **changes)
    assert len(found) == len(said), found
    for problem, words in zip(found, said, strict=True):
        assert words in problem, found


def test_the_run_resumed_from_is_beside_this_runs_folder(tmp_path):
    here = tmp_path / "runs" / "r2"
    assert earlier_run_folder(Resume("ckpt", from_run="r1"), here) == tmp_path / "runs" / "r1"


@pytest.mark.parametrize("recorded", [True, False])  # this version's record, and an old one
def test_a_kept_nodes_replacement_never_resumes_by_itself(recorded):
    """A kept node's record holds what ``up`` asked (no --checkpoints there); ``run
    --checkpoints`` asks the resume for each run, so a replacement's answers hold none of it,
    whether the record is this version's or from before settings were recorded."""
    plan = launch_plan("v5litepod-1", "us-central1-a", "p", "r1", Path("runs/r1"), route=Route.SPOT)
    settings = kept_settings(plan)
    assert {f.name for f in fields(Resume)}.isdisjoint(settings)
    r = Resource("queued", "p", "us-central1-a", "dev", "v5litepod-1", "r1", "spot", "dev")
    extra = {SETTINGS_FIELD: settings} if recorded else {}
    answers = replacement_answers(Entry(r, "kept", 1, 1, extra))
    assert answers.resume == Resume()
    assert plan_for_run("r2", Path("x"), answers, answers.where.backend).resume == Resume()
