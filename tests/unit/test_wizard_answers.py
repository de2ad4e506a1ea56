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
)


def test_the_preview_takes_reviews_answers_and_leaves_the_state_alone():
    state = WizardState(accelerator="v5litepod-4", zone="us-central1-a", project="p")
    preview = state.reviewed(ANSWER)
    assert (preview.name, preview.max_run_minutes) == ("my-run", 30.0)
    assert preview.script == Path("main.py")
    assert preview.watchdog and preview.deep_checks and preview.fetch == ("reports/*.json",)
    assert preview.accelerator == "v5litepod-4"  # the other steps' answers come along
    assert state.name is None and not state.watchdog and state.fetch == ()


def test_taking_reviews_answers_sets_every_field_it_has():
    state = WizardState()
    state.take_review(ANSWER)
    taken = {f: getattr(state, f) for f in ANSWER.__dataclass_fields__}
    assert taken == {f: getattr(ANSWER, f) for f in ANSWER.__dataclass_fields__}
