"""The Teardown step says what the zone's TPU list shows now (issue 27, item 7), a TPU made by
hand with the course's commands among them, labelled as not tpuwizard's."""

from __future__ import annotations

from tests.tui.pilot_helpers import until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens.run import TeardownScreen


def logged(app) -> str:
    """The Teardown step's log, its lines joined and spaces folded ('' on another screen)."""
    screen = app.screen
    return " ".join(screen.log_text().split()) if isinstance(screen, TeardownScreen) else ""


async def test_the_teardown_step_shows_the_zones_list_with_a_hand_made_tpu_labelled():
    hand_made = ev.ListedTpu("jax-course-tpu-01", "v5litepod-1", "READY", "not made by tpuwizard")
    feed = [
        ev.TeardownStarted("tpuwizard-demo", "node"),
        ev.TeardownVerified("tpuwizard-demo", "node", 312.0, 0.416),
        ev.ZoneListed("us-central1-a", "tpu-api", "", (hand_made,)),
        ev.Finished(True, 0, "runs/demo", 0.416),
    ]
    app = Harness(TeardownScreen, None, feed)
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: "jax-course-tpu-01" in logged(app), 30, "the zone's list")
        screen = app.screen
        assert isinstance(screen, TeardownScreen)
        text = logged(app)
        assert "The TPU list of us-central1-a now: 1 TPU." in text
        assert "jax-course-tpu-01 v5litepod-1 READY not made by tpuwizard" in text
        assert "tpuwizard never deletes it" in text


async def test_the_screenshot_script_draws_the_lines_a_run_screen_still_holds(tmp_path):
    """scripts/screenshots.py takes the Teardown picture as the Summary replaces the screen,
    when the last events' lines are still pending (written in 50 ms batches): it settles first."""
    import importlib.util

    from tests.conftest import REPO

    spec = importlib.util.spec_from_file_location(
        "screenshots", REPO / "scripts" / "screenshots.py"
    )
    assert spec is not None and spec.loader is not None
    screenshots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshots)
    app = Harness(TeardownScreen, None, [])
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TeardownScreen), 30, "Teardown")
        screen = app.screen
        assert isinstance(screen, TeardownScreen)
        screen.show(ev.ZoneListed("us-central1-a", "tpu-api", "", ()))  # as the stream ends
        taken_at_once = app.export_screenshot().replace("&#160;", " ")
        assert "TPU list" not in taken_at_once  # the cause: the line is still pending
        await screenshots.settle(app)
        picture = " ".join(app.export_screenshot().replace("&#160;", " ").split())
    assert "The TPU list of us-central1-a now" in picture
