"""--checkpoints, --checkpoint-every and --max-restarts: refused before any cloud call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plans import changed, launch_plan
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.parts import Deadline, Resume, Workload
from tpuwizard.core.launch.plan.resume_rules import parse_duration
from tpuwizard.words.choice_words import all_words


def plan(tmp_path: Path, **changes: object) -> LaunchPlan:
    script = tmp_path / "job" / "train.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("print('hi')\n")
    base = launch_plan(
        accelerator="v5litepod-4",
        zone="us-central1-a",
        project="practice-project",
        run_id="r1",
        run_dir=tmp_path / "runs" / "r1",
        route="spot",
        workload=Workload(script=script),
        resume=Resume("ckpt"),
    )
    return changed(base, **changes)


def test_a_folder_inside_the_scripts_folder_is_accepted(tmp_path):
    assert plan(tmp_path).problems() == []
    assert plan(tmp_path, resume=Resume("out/ckpt")).problems() == []


@pytest.mark.parametrize(
    ("folder", "said"),
    [
        ("/tmp/ckpt", "absolute"),
        ("../ckpt", "'..'"),
        ("out/../../ckpt", "'..'"),
        (".", "folder itself"),
        ("~/ckpt", "absolute"),
        ("my ckpt", "character"),
    ],
)
def test_a_folder_outside_it_is_refused_with_what_to_type(tmp_path, folder, said):
    problems = cli(plan(tmp_path, resume=Resume(folder)))
    assert len(problems) == 1 and said in problems[0] and "such as checkpoints" in problems[0]
    assert problems[0].startswith("--checkpoints ")
    # The wizard names its field, plain mode its question; neither names a flag.
    (wizard,) = all_words(plan(tmp_path, resume=Resume(folder)).problems(), "wizard")
    assert said in wizard
    assert 'in the "Resume after preemption" field on Review' in wizard
    assert "--" not in wizard
    (plain,) = all_words(plan(tmp_path, resume=Resume(folder)).problems(), "plain")
    assert "the Resume after preemption question" in plain and "--" not in plain


def cli(p: LaunchPlan) -> list[str]:
    return all_words(p.problems(), "cli")


def test_checkpoints_need_a_script_and_the_spot_route(tmp_path):
    assert any("--script" in p for p in cli(plan(tmp_path, workload=Workload())))
    assert any("--route spot" in p for p in cli(plan(tmp_path, route="vm")))
    assert any(
        "--max-restarts" in p for p in cli(plan(tmp_path, resume=Resume("ckpt", max_restarts=-1)))
    )
    assert any("--max-run 10 or more" in p for p in cli(plan(tmp_path, deadline=Deadline(5))))
    alone = cli(plan(tmp_path, resume=Resume(max_restarts=5)))
    assert any("add --checkpoints" in p for p in alone)


def test_the_wizard_says_its_own_fields_for_the_script_and_the_deadline(tmp_path):
    no_script = all_words(plan(tmp_path, workload=Workload()).problems(), "wizard")
    assert any('the "Your script" field on Review' in p for p in no_script)
    short = all_words(plan(tmp_path, deadline=Deadline(5)).problems(), "wizard")
    assert any('10 or more in the "Deadline (minutes)" field' in p for p in short)


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("5m", 300), ("2", 120), ("1m", 60)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0s", "5h", "-3", "often", "90000s"])
def test_bad_durations_say_what_to_type(text):
    with pytest.raises(BadInput, match="30s"):
        parse_duration(text)
