"""Review: naming the course's tpu-report.txt under Files to copy back is answered at once with
where tpuwizard keeps the script's output (output.txt), once."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.pilot_helpers import on_screen, press, until
from tests.tui.test_review_packages import review_state
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Workload


async def test_tpu_report_txt_under_files_to_copy_back_is_explained(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    state = review_state(workload=Workload(script=script))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        screen = app.screen
        screen.query_one("#fetch", Input).value = "tpu-report.txt"

        def told() -> list[str]:
            return [
                str(n.message) for n in app._notifications if "tpu-report.txt" in str(n.message)
            ]

        await until(pilot, lambda: told(), 30, "the note on tpu-report.txt")
        (note,) = told()
        assert "output.txt" in note and "only if your script writes it" in note
        screen.query_one("#fetch", Input).value = "tpu-report.txt, x.json"
        await pilot.pause()
        assert len(told()) == 1  # said once


async def test_the_note_goes_with_review_and_covers_no_button_after_the_script_ends(tmp_path):
    """At 80x24 the note stayed 30 s and covered the Script step's Shell and Tear down (issue 55,
    item 10): Review's notes go when Review does, and the choices after the script are bare."""
    from textual.widgets._toast import Toast

    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.tui.screens.review import ReviewScreen
    from tpuwizard.tui.screens.run import ScriptScreen

    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    state = review_state(workload=Workload(script=script))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:  # toasts drawn
        await on_screen(pilot, "ReviewScreen", 30)
        review = app.screen
        review.query_one("#fetch", Input).value = "tpu-report.txt"
        await until(pilot, lambda: app.screen.query(Toast), 30, "the note shown")
        note = app.screen.query_one(Toast).region
        assert note.right > 40 and note.bottom > 12  # where the Script step's buttons come
        await press(pilot, "#create")
        await until(pilot, lambda: review not in app.screen_stack, 30, "Review dismissed")
        script_step = ScriptScreen()
        await app.push_screen(script_step)
        for event in (ev.ScriptLine(0, "prediction: 1040384.0"), ev.ScriptDone(0, True, 3000.0)):
            script_step.show(event)
        await until(pilot, lambda: script_step.query("#end-runs"), 30, "the choices")
        await pilot.pause()
        assert not list(app._notifications)
        toasts = [toast.region for toast in script_step.query(Toast)]
        for button in ("#open-shell", "#end-runs"):
            region = script_step.query_one(button).region
            assert region.height > 0 and region.bottom <= 23, button  # above the key bar
            assert not any(region.overlaps(toast) for toast in toasts), button
