"""The key bar at the bottom of each step: the step's own keys, and a click presses one."""

from tests.tui.pilot_helpers import on_screen, until
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.key_bar import KeyBar

SIZE = (80, 24)


def bar_of(app) -> KeyBar:
    return app.screen.query_one(KeyBar)


def column_of(bar: KeyBar, key: str) -> int:
    return next(start for start, _end, k in bar.spans if k == key) + 1


async def test_the_key_bar_names_the_steps_keys_and_a_click_presses_them(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        words = str(bar_of(app).render())
        assert "Quit" in words and "Help" in words and "palette" in words
        assert "Back" not in words  # the first step has nowhere to go back to

        bar = bar_of(app)
        await pilot.click(KeyBar, offset=(column_of(bar, "f1"), 0))
        await on_screen(pilot, "HelpScreen", 30)
        # A dialog's keys while it is open (the step's Enter is not what Enter does now).
        await until(pilot, lambda: "Close" in str(bar.render()), 30, "the dialog's keys")
        assert "Next" not in str(bar.render()) and "Help" not in str(bar.render())
        await pilot.press("escape")
        await on_screen(pilot, "RouteScreen", 30)
        await until(pilot, lambda: "Next" in str(bar.render()), 30, "the step's keys again")

        await pilot.press("enter")  # on to the account step, which can go back
        await on_screen(pilot, "AccountScreen")
        await until(pilot, lambda: "Back" in str(bar_of(app).render()), 30, "Back in the bar")
        await pilot.click(KeyBar, offset=(column_of(bar_of(app), "escape"), 0))
        await on_screen(pilot, "RouteScreen", 30)


async def test_the_palette_key_sits_at_the_right_end_of_the_bar(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        words = str(bar_of(app).render())
        assert len(words) == SIZE[0] and words.rstrip().endswith("palette")
