"""The Script step's log scrolls back by the mouse wheel and by keys, with the rerun choices
under it too, and keeps the reader where they scrolled while new lines arrive (issue 31's
"the Script log does not scroll", checked here at both sizes)."""

from __future__ import annotations

import pytest
from textual import events

from tests.tui.pilot_helpers import until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens.run import ScriptScreen
from tpuwizard.tui.widgets.follow_log import FollowLog


def wheel_up(x: int, y: int) -> events.MouseScrollUp:
    return events.MouseScrollUp(None, x, y, 0, -1, 0, False, False, False, screen_x=x, screen_y=y)


@pytest.mark.parametrize("size", [(100, 32), (80, 24)])
async def test_the_script_log_scrolls_back_and_stays_there(size):
    app = Harness(ScriptScreen)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for i in range(200):
            app.screen.show(ev.ScriptLine(0, f"line {i}"))
        app.screen.show(ev.ScriptDone(1, True, 3000.0))  # the rerun choices mount below it
        # Settled first: the choices mounted and focused, the log laid out at its newest line.
        await until(pilot, lambda: app.focused is not None and app.focused.id == "run-again")
        log = app.screen.query_one(FollowLog)
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        end = log.scroll_y
        x, y = log.region.x + 5, log.region.y + 3
        assert app.screen.get_widget_at(x, y)[0] is log
        for _ in range(3):
            app.post_message(wheel_up(x, y))
            await pilot.pause()
        assert log.scroll_y < end  # the wheel scrolled the log itself
        log.focus()
        await pilot.press("pageup")
        back = log.scroll_y
        assert back < end - 3
        for i in range(5):
            app.screen.show(ev.ScriptLine(0, f"more {i}"))
        await pilot.pause()
        assert log.scroll_y == back  # new lines do not pull the reader to the end
