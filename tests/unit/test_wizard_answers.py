"""Review's answer is the launch's parts, which the wizard's state takes whole and hands on to
the plan's answers as they are; the first step's card is parsed once, into a Route or the free
notebook's walk; the preview is a copy."""

from pathlib import Path

import pytest

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Resume, Workload
from tpuwizard.core.routes import Route
from tpuwizard.tui.answers import ReviewAnswer
from tpuwizard.tui.state import WizardState

WORKLOAD = Workload(
    script=Path("main.py"),
    fetch=("reports/*.json",),
    packages=(PackageSpec("optax", "the Packages field"),),
    jax="0.6.2",
    precision=True,
    trace=True,
)
ANSWER = ReviewAnswer(
    name="my-run",
    backend=Backend.TPU_API,
    deadline=Deadline(30.0, watchdog=True),
    workload=WORKLOAD,
    guards=Guards(stall_minutes=30.0),  # F4's dialog (issue 47)
    resume=Resume(autocheckpoint=False),
)


def reviewed_state(**asked: object) -> WizardState:
    fields: dict[str, object] = dict(accelerator="v5litepod-4", zone="us-central1-a", project="p")
    return WizardState(**{**fields, **asked})  # type: ignore[arg-type]


def test_the_preview_takes_reviews_answers_and_leaves_the_state_alone():
    state = reviewed_state()
    preview = state.reviewed(ANSWER)
    assert (preview.name, preview.deadline, preview.workload) == (
        "my-run",
        ANSWER.deadline,
        WORKLOAD,
    )
    assert preview.accelerator == "v5litepod-4"  # the other steps' answers come along
    assert state.name is None and state.deadline == Deadline(watchdog=False)
    assert state.workload == Workload()
    answers = preview.plan_answers()
    assert answers.guards.stall_minutes == 30.0 and answers.resume.autocheckpoint is False
    assert state.plan_answers().guards.stall_minutes is None  # the default, untouched
    # The plan's default: Autocheckpoint on where the node can have it.
    assert state.plan_answers().resume.autocheckpoint is None


def test_taking_reviews_answers_sets_every_part_it_has():
    state = WizardState()
    state.take_review(ANSWER)
    taken = {f: getattr(state, f) for f in ANSWER.__dataclass_fields__}
    assert taken == {f: getattr(ANSWER, f) for f in ANSWER.__dataclass_fields__}


def test_the_plans_answers_are_reviews_parts_with_the_steps_where():
    answers = reviewed_state(route=Route.SPOT).reviewed(ANSWER).plan_answers()
    where = answers.where
    assert (where.slice.name, where.zone, where.project) == ("v5litepod-4", "us-central1-a", "p")
    assert (where.route, where.backend, where.name) == (Route.SPOT, Backend.TPU_API, "my-run")
    assert answers.deadline is ANSWER.deadline and answers.guards is ANSWER.guards
    assert answers.workload == WORKLOAD  # no requirements.txt beside main.py here


def test_a_requirements_file_beside_the_script_is_added_after_the_fields(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print(1)\n")
    (tmp_path / "requirements.txt").write_text("tinypkg\n")
    typed = (PackageSpec("optax", "the Packages field"),)
    state = reviewed_state(workload=Workload(script=script, packages=typed))
    packages = state.plan_answers().workload.packages
    assert [p.text for p in packages] == ["optax", "tinypkg"]
    assert state.workload.packages == typed  # the field's alone: Review shows them again


@pytest.mark.parametrize(
    ("route", "folder", "resumes_from"),
    [
        (Route.SPOT, "ckpt", "ckpt"),  # Google preempts spot: the run resumes from the folder
        (Route.VM, "ckpt", None),  # on demand nothing is preempted: kept for going back only
        (Route.SPOT, None, None),
    ],
)
def test_the_checkpoints_folder_reaches_the_plan_only_where_the_route_offers_resume(
    route, folder, resumes_from
):
    state = reviewed_state(route=route, resume=Resume(folder))
    assert state.plan_answers().resume.checkpoints == resumes_from
    assert state.resume.checkpoints == folder


@pytest.mark.parametrize(
    ("cards", "route", "free_notebook", "max_run"),
    [
        (["spot"], Route.SPOT, False, None),  # another route: its own default deadline
        (["vm"], Route.VM, False, 90.0),  # the same card again keeps the deadline typed
        (["notebook"], Route.VM, True, None),  # the free notebook's walk, the route as it was
        (["notebook", "flex"], Route.FLEX, False, None),
    ],
)
def test_the_first_steps_card_is_parsed_once(cards, route, free_notebook, max_run):
    state = WizardState(deadline=Deadline(90.0, watchdog=False))
    for card in cards:
        state.choose_route(card)
    assert (state.route, state.free_notebook) == (route, free_notebook)
    assert state.deadline.max_run_minutes == max_run
    assert state.route_card == cards[-1]  # what the first step shows chosen when it comes back


def test_a_card_that_is_no_route_is_refused_at_the_edge():
    with pytest.raises(ValueError):
        WizardState().choose_route("tpu-please")
