"""Review's worker JAX: the table's default shown and marked, this computer's JAX said where it
differs, F3 picks another version of the table, and the launch plan carries the choice."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList, Static

from tests.tui.pilot_helpers import on_screen, screen_as, until
from tests.tui.test_review_packages import review_state
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.plan import jax_versions
from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE
from tpuwizard.tui.widgets.key_bar import KeyBar


def _words(app) -> str:
    return " ".join(str(app.screen.query_one("#worker-jax", Static).render()).split())


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_review_shows_the_default_and_f3_picks_another_version(monkeypatch, size):
    from tpuwizard.tui.screens.review import ReviewScreen

    # The table has a version to pick besides the default (the newest of the table).
    newest = next(v.version for v in reversed(TABLE) if v != DEFAULT)
    monkeypatch.setattr(jax_versions, "laptop_jax", lambda: DEFAULT.version)
    state = review_state()
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        assert f"Worker's JAX {DEFAULT.version} (default)" in _words(app)
        assert "This computer" not in _words(app)  # the same version on both sides
        jax_region = app.screen.query_one("#worker-jax").region
        assert jax_region.height > 0 and jax_region.bottom <= size[1] - 1  # above the key bar
        assert "f3" in app.screen.query_one(KeyBar).render().plain.lower()
        await pilot.press("f3")
        await on_screen(pilot, "JaxPicker", 30)
        options = app.screen.query_one("#jax-versions", OptionList)
        assert options.option_count == len(TABLE)
        assert options.highlighted == [v.version for v in TABLE].index(DEFAULT.version)
        listed = str(options.get_option_at_index(options.highlighted).prompt)
        assert "(default)" in listed and "Not run on a TPU" in listed
        options.highlighted = [v.version for v in TABLE].index(newest)
        await pilot.press("enter")
        await on_screen(pilot, "ReviewScreen", 30)
        await until(pilot, lambda: newest in _words(app), 30, "the version picked")
        assert f"(default {DEFAULT.version})" in _words(app)
        assert f"This computer has JAX {DEFAULT.version}: results here may differ" in _words(app)
        plan = state.reviewed(screen_as(app, ReviewScreen).answers()).preview()
        assert plan.workload.jax == newest and not plan.problems()
        await pilot.press("f3")  # Esc in the picker changes nothing
        await on_screen(pilot, "JaxPicker", 30)
        await pilot.press("escape")
        await on_screen(pilot, "ReviewScreen", 30)
        assert screen_as(app, ReviewScreen).answers().workload.jax == newest


async def test_a_different_laptop_jax_is_said_with_the_default(monkeypatch):
    from tpuwizard.tui.screens.review import ReviewScreen

    monkeypatch.setattr(jax_versions, "laptop_jax", lambda: "0.9.2")
    state = review_state(workload=Workload(jax=None))
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        assert "This computer has JAX 0.9.2: results here may differ" in _words(app)
        assert (
            screen_as(app, ReviewScreen).answers().workload.jax is None
        )  # the default: the plan's own
