"""The wizard's "Resume after preemption": Review's field on the spot route (inside 80x24, the
same plan field the CLI fills), and a spot run preempted once in the sandbox, walked end to end:
the new attempt said above the log, the meter counting the first attempt's billing, the
summary listing both attempts, everything verified gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Button, Input, Static

from tests.tui.pilot_helpers import (
    on_screen,
    press,
    sandbox_nodes,
    screen_as,
    until,
    walk_to_review,
)
from tests.tui.test_review_packages import review_state, whole_on_screen
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Resume, Workload
from tpuwizard.core.routes import Route
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.run import RunScreen
from tpuwizard.tui.screens.summary import SummaryScreen
from tpuwizard.words.summary_text import summary_lines

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "resumable_train.py"


async def test_spot_review_offers_resume_after_preemption_inside_80x24(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    state = review_state(route=Route.SPOT, workload=Workload(script=script))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        screen = screen_as(app, ReviewScreen)
        field = screen.query_one("#checkpoints", Input)
        assert field.border_title == "Resume after preemption" and field.border_subtitle == "off"
        assert screen.answers().resume.checkpoints is None
        assert state.reviewed(screen.answers()).preview().resume.checkpoints is None
        field.value = "ckpt"
        await pilot.pause()
        for selector in ("#checkpoints", "#script", "#create"):
            assert whole_on_screen(app, selector), selector
        assert field.border_subtitle == "every 1m; 3 restarts"  # the plan's own defaults
        plan = state.reviewed(screen.answers()).preview()
        assert plan.resume.checkpoints == "ckpt" and plan.problems() == []
        assert not screen.query_one("#create", Button).disabled
        field.value = "../elsewhere"
        await pilot.pause()
        assert screen.query_one("#create", Button).disabled
        error = str(screen.query_one("#error", Static).render())
        assert "climbs out with '..'" in error and "--" not in error
        assert 'the "Resume after preemption" field on Review' in error


async def test_other_routes_have_no_resume_field_and_launch_no_chain(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    # A folder typed on spot, then Back to another route: it is not offered, and not planned.
    state = review_state(route=Route.VM, resume=Resume("ckpt"))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        assert not app.screen.query("#checkpoints")
        answers = screen_as(app, ReviewScreen).answers()
        assert state.reviewed(answers).preview().resume.checkpoints is None


@pytest.mark.rotating("resume-e2e")
async def test_a_spot_run_preempted_once_resumes_and_the_wizard_shows_every_attempt(
    tmp_path, home, monkeypatch
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "0.05")
    # Preempted once the script has committed its first set on worker 0: before the first copy
    # pass (the wizard copies every minute), so the new attempt starts from the start.
    monkeypatch.setenv(
        "TPUWIZARD_SANDBOX_FAULTS", "preempt_on=.tpuwizard/work/ckpt/*/COMMITTED;preempt_times=1"
    )
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(EXAMPLE, job / "train.py")
    # The wizard gives a script no arguments: this one runs the example with a few slow steps.
    (job / "main.py").write_text(
        "import runpy, sys\n"
        "sys.argv = ['train.py', '--steps', '12', '--save-every', '3', '--step-seconds', '0.2']\n"
        "runpy.run_path('train.py', run_name='__main__')\n"
    )
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("right")  # spot
        await walk_to_review(pilot)
        app.screen.query_one("#script", Input).value = str(job / "main.py")
        app.screen.query_one("#checkpoints", Input).value = "ckpt"
        await pilot.pause()
        await press(pilot, "#create")

        def attempt_line() -> str:
            lines = app.screen.query("#attempt").results(Static)
            return next((str(s.render()) for s in lines if s.display), "")

        await until(pilot, lambda: attempt_line().startswith("Attempt 1 of 4"), 120, "attempt 1")
        await until(pilot, lambda: attempt_line().startswith("Attempt 2 of 4"), 120, "attempt 2")
        assert attempt_line().startswith(
            "Attempt 2 of 4, from the start (no checkpoint had come home)"
        )
        # The first attempt's node is verified gone, and what it billed stays on the meter.
        assert app.billing.gone_cost_usd > 0
        await until(pilot, lambda: app.screen.query("#end-runs"), 120, "the resumed run's end")
        assert "final step 12" in screen_as(app, RunScreen).log_text()
        await press(pilot, "#end-runs")
        await on_screen(pilot, "SummaryScreen", 120)
        # What the screen shows.
        summary = summary_lines(screen_as(app, SummaryScreen).summary, "wizard")
        assert "  Attempts: 2 of at most 4" in summary
        first = next(line for line in summary if line.startswith("    1 in "))
        second = next(line for line in summary if line.startswith("    2 in "))
        assert first.endswith(": preempted"), first
        # The last copy pass, when the script ends, brings its last set home.
        assert second.endswith(": from the start, last checkpoint home step 12, finished"), second
        assert not app.billing.existing()
    assert sandbox_nodes(home) == {}
