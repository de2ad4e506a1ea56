"""The Route step shows the weekly Kaggle TPU quota left on the free notebook's card, read off
the UI thread once the step is drawn; in practice it says the figure is the stand-in's."""

from __future__ import annotations

from tests.tui.pilot_helpers import on_screen, until
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.route_cards import RouteCards


def card_lines(app: WizardApp) -> str:
    cards = app.screen.query_one(RouteCards)
    return "\n".join(str(line) for line in cards.lines(cards.size.width))


async def test_the_route_step_shows_the_stand_ins_quota_beside_the_free_notebook(tmp_path):
    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_screen(pilot, "RouteScreen")
        cards = app.screen.query_one(RouteCards)
        await until(pilot, lambda: "notebook" in cards.notes, 30, "the quota read")
        assert cards.notes["notebook"] == (
            "Kaggle TPU: 20.0 h of 20 h left this week (the practice stand-in's figure)"
        )
        assert "Kaggle TPU: 20.0 h of 20" in card_lines(app)  # drawn on the card, not only kept


async def test_an_exhausted_quota_is_said_on_the_route_step(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_KAGGLE_FAULTS", "quota_exhausted")
    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_screen(pilot, "RouteScreen")
        cards = app.screen.query_one(RouteCards)
        await until(pilot, lambda: "notebook" in cards.notes, 30, "the quota read")
        assert cards.notes["notebook"].startswith("Kaggle TPU: used up this week (of 20 h)")


async def test_a_quota_read_landing_after_the_route_step_was_left_costs_nothing(tmp_path):
    # Under load the read can land once the user has gone on: the step's cards are gone then,
    # and the wizard must go on (it crashed with NoMatches, taking the walk with it).
    from tests.tui.pilot_helpers import next_step

    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_screen(pilot, "RouteScreen")
        route = app.screen
        await next_step(pilot)
        await until(pilot, lambda: app.screen is not route, 30, "the next step")
        await pilot.pause()
        route.kaggle_quota_read("Kaggle TPU: late")  # as the read's worker would, late
        await pilot.pause()
        assert app.is_running and app.screen is not route
