import pytest

from tests.tui.pilot_helpers import on_screen, press, until, walk_to_review
from tpuwizard.tui.app import WizardApp


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_scratch(tmp_path, size):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=size) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 120, "the end")
        await on_screen(pilot, "SummaryScreen")
        for i in range(10):
            await pilot.pause(0.1)
            body = app.screen.query_one("#body")
            print(size, i, body.max_scroll_y, body.scroll_y, app.focused)
        print(app.screen.query_one("#summary").plain)
        await pilot.press("ctrl+q")
