"""The Notebook step's script stays the Notebook step's (issue 49, the newcomer's round 5): after a
run on Kaggle or Colab, Review's optional script field for a TPU launch held that main.py (the
free route wrote it into the one script value Review reads), so the next TPU launch would run
it unasked. Review's field now starts with Review's own answer only."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tests.tui.pilot_helpers import on_screen
from tests.tui.test_review_packages import review_state
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Workload


async def test_a_script_run_on_kaggle_does_not_fill_reviews_field(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "main.py"
    script.write_text("print(1)\n")
    state = review_state()
    state.take_notebook(script)  # what the free route does with the Notebook step's answer
    assert state.notebook_default() == script  # the Notebook step offers it again
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        assert app.screen.query_one("#script", Input).value == ""


def test_the_notebook_step_starts_with_reviews_script_until_it_has_its_own(tmp_path):
    state = review_state(workload=Workload(script=Path("train.py")))
    assert state.notebook_default() == Path("train.py")
    state.take_notebook(Path("main.py"))
    assert state.notebook_default() == Path("main.py") and state.workload.script == Path("train.py")
