"""Review's answer is folded into the wizard's state field by field; the preview is a copy."""

from pathlib import Path

from tpuwizard.tui.answers import ReviewAnswer
from tpuwizard.tui.state import WizardState

ANSWER = ReviewAnswer(
    name="my-run",
    max_run_minutes=30.0,
    watchdog=True,
    deep_checks=True,
    script=Path("main.py"),
    fetch=("reports/*.json",),
    stall_minutes=30.0,  # F4's dialog (issue 47)
    autocheckpoint=False,
)


def test_the_preview_takes_reviews_answers_and_leaves_the_state_alone():
    state = WizardState(accelerator="v5litepod-4", zone="us-central1-a", project="p")
    preview = state.reviewed(ANSWER)
    assert (preview.name, preview.max_run_minutes) == ("my-run", 30.0)
    assert preview.script == Path("main.py")
    assert preview.watchdog and preview.deep_checks and preview.fetch == ("reports/*.json",)
    assert preview.accelerator == "v5litepod-4"  # the other steps' answers come along
    assert state.name is None and not state.watchdog and state.fetch == ()
    answers = preview.plan_answers()
    assert answers.guards.stall_minutes == 30.0 and answers.resume.autocheckpoint is False
    assert state.plan_answers().guards.stall_minutes is None  # the default, untouched
    assert (
        state.plan_answers().resume.autocheckpoint is None
    )  # the plan's default: on where it can be


def test_taking_reviews_answers_sets_every_field_it_has():
    state = WizardState()
    state.take_review(ANSWER)
    taken = {f: getattr(state, f) for f in ANSWER.__dataclass_fields__}
    assert taken == {f: getattr(ANSWER, f) for f in ANSWER.__dataclass_fields__}
