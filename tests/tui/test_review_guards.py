"""Review's F4 (issue 47): the stall guard's minutes and, where the plan's rule offers it,
Autocheckpoint, shown on their own line inside 80x24 and handed to the plan as the CLI's
--stall-timeout and --no-autocheckpoint are."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static, Switch

from tests.tui.pilot_helpers import on_screen, screen_as, until
from tests.tui.test_review_packages import review_state, whole_on_screen
from tests.tui.test_snapshots import Harness
from tpuwizard.core.cloud.iam import WatchdogCheck
from tpuwizard.core.launch.plan.parts import Resume, Workload
from tpuwizard.core.routes import Route


def guards_words(app) -> str:
    return str(app.screen.query_one("#guards", Static).render())


async def test_a_spot_run_that_resumes_offers_autocheckpoint_and_the_dialog_feeds_the_plan(
    tmp_path,
):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    state = review_state(route=Route.SPOT, workload=Workload(script=script), resume=Resume("ckpt"))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        for selector in ("#guards", "#create", "#checkpoints"):
            assert whole_on_screen(app, selector), selector
        assert guards_words(app) == "Stall guard 45 min, Autocheckpoint ON; F4: change."
        assert state.reviewed(screen_as(app, ReviewScreen).answers()).preview().autocheckpoint_on

        await pilot.press("f4")
        await on_screen(pilot, "GuardsDialog", 30)
        dialog = app.screen
        assert whole_on_screen(app, "#ok") and whole_on_screen(app, "#autocheckpoint")
        dialog.query_one("#stall-minutes", Input).value = "30"
        dialog.query_one("#autocheckpoint", Switch).value = False
        await pilot.pause()
        assert "Autocheckpoint OFF" in str(dialog.query_one("#autocheckpoint-label").render())
        await pilot.click("#ok")
        await on_screen(pilot, "ReviewScreen", 30)
        await until(pilot, lambda: "30 min" in guards_words(app), 30, "the line changed")
        assert guards_words(app) == "Stall guard 30 min, Autocheckpoint OFF; F4: change."
        answers = state.reviewed(screen_as(app, ReviewScreen).answers()).plan_answers()
        assert answers.guards.stall_minutes == 30 and answers.resume.autocheckpoint is False
        plan = state.reviewed(screen_as(app, ReviewScreen).answers()).preview()
        assert plan.guards.stall_minutes == 30 and not plan.autocheckpoint_on
        assert plan.problems() == []

        # Without a checkpoints folder the node would get nothing to save into: not offered.
        app.screen.query_one("#checkpoints", Input).value = ""
        await pilot.pause()
        assert guards_words(app) == "Stall guard 30 min; F4: change."


@pytest.mark.parametrize(
    ("accelerator", "route", "checkpoints"),
    [("v5litepod-4", "vm", ""), ("v6e-4", "spot", "ckpt")],
    ids=["on-demand", "v6e-resumes"],
)
async def test_where_autocheckpoint_cannot_be_the_dialog_says_why_and_checks_the_minutes(
    tmp_path, accelerator, route, checkpoints
):
    from tpuwizard.tui.screens.review import ReviewScreen
    from tpuwizard.tui.state import WizardState

    # On demand nothing resumes; a v6e that resumes is not a generation Autocheckpoint serves.
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    state = WizardState(
        practice=True,
        project="tpuwizard-practice",
        zone="us-central1-a",
        accelerator=accelerator,
        route=Route(route),
        resume=Resume(checkpoints or None),
        workload=Workload(script=script),
    )
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        assert guards_words(app) == "Stall guard 45 min; F4: change."
        await pilot.press("f4")
        await on_screen(pilot, "GuardsDialog", 30)
        dialog = app.screen
        assert not dialog.query("#autocheckpoint")
        assert "Autocheckpoint: not for this run" in " ".join(
            str(s.render()) for s in dialog.query(Static)
        )
        field = dialog.query_one("#stall-minutes", Input)
        for typed, said in (
            ("-1", "must be a number of minutes"),
            ("soon", "'soon' is not a number"),
        ):
            field.value = typed
            field.focus()
            await pilot.press("enter")  # Enter in the field is OK
            await pilot.pause()
            assert app.screen is dialog  # not taken
            error = str(dialog.query_one("#guard-error", Static).render())
            assert said in error and "--stall-timeout" not in error, error
        field.value = "0"
        await pilot.click("#ok")
        await on_screen(pilot, "ReviewScreen", 30)
        assert guards_words(app) == "Stall guard off; F4: change."
        answers = screen_as(app, ReviewScreen).answers()
        assert state.reviewed(answers).preview().guards.stall_minutes == 0

        await pilot.press("f4")
        await on_screen(pilot, "GuardsDialog", 30)
        app.screen.query_one("#stall-minutes", Input).value = "90"
        await pilot.press("escape")  # Cancel: nothing changes
        await on_screen(pilot, "ReviewScreen", 30)
        assert guards_words(app) == "Stall guard off; F4: change."


async def test_the_guards_line_keeps_create_on_an_80x24_screen_at_its_fullest(tmp_path):
    """The fullest Review at 80x24: a two-line fit verdict and three lines of deadline words
    (the watchdog cannot run, F1 shows the command); the line takes the row Create's margin
    had, so Create stays whole and nothing scrolls."""
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    check = WatchdogCheck(
        False, "it may not delete", "1-compute@x.example", fix="gcloud ...", short="it may not"
    )
    state = review_state(
        route=Route.SPOT,
        workload=Workload(script=script),
        resume=Resume("ckpt"),
        watchdog_check=check,
    )
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        words = str(app.screen.query_one("#deadline-words", Static).render())
        assert "F1 shows the command" in words
        for selector in ("#guards", "#create", "#worker-jax"):
            assert whole_on_screen(app, selector), selector
        body = app.screen.query_one("#body")
        assert body.max_scroll_y == 0, body.virtual_size
