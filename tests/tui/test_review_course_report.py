"""Review: naming the course's tpu-report.txt under Files to copy back is answered at once with
where tpuwizard keeps the script's output (output.txt), once."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.pilot_helpers import on_screen, until
from tests.tui.test_review_packages import review_state
from tests.tui.test_snapshots import Harness


async def test_tpu_report_txt_under_files_to_copy_back_is_explained(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    state = review_state(script=script)
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
