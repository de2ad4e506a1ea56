"""The Teardown step says the course's last check as the CLI and plain mode do: the zone's TPU
list, empty."""

from tests.tui.pilot_helpers import until
from tests.tui.test_snapshots import Harness
from tests.tui.test_teardown_list import logged
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens.run import TeardownScreen


async def test_the_teardown_step_says_the_course_s_empty_list_line():
    feed = [
        ev.TeardownStarted("tpuwizard-demo", "node"),
        ev.TeardownVerified("tpuwizard-demo", "node", 312.0, 0.416),
        ev.ZoneListed("us-central1-a", "tpu-api", "", ()),
        ev.Finished(True, 0, "runs/demo", 0.416),
    ]
    app = Harness(TeardownScreen, None, feed)
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: "TPU list" in logged(app), 30, "the zone's list")
        text = logged(app)
        assert (
            "The TPU list of us-central1-a now: empty. No TPU, yours or anyone's, is there." in text
        )
