"""A checkpoints folder whose files can never come home is said on the Script step as a
notification as well as in the log (it decides whether a preemption loses the run), and the
CLI and plain mode print the same line."""

from __future__ import annotations

from tests.tui.pilot_helpers import until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens.run import ScriptScreen
from tpuwizard.words.event_text import describe

UNUSABLE = ev.CheckpointsUnusable("ckpt", 3)
LINE = "ckpt/ holds 3 file(s) but no complete set: write COMMITTED last"


async def test_the_script_step_notifies_a_folder_that_can_never_come_home():
    app = Harness(ScriptScreen, feed=(UNUSABLE,))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app._notifications, 30, "the notification")
        (note,) = list(app._notifications)
        assert str(note.message).startswith(LINE) and note.severity == "warning"
        await until(pilot, lambda: LINE in app.screen.log_text(), 30, "the log line")


def test_the_cli_and_plain_mode_print_the_same_line():
    for audience in ("cli", "plain"):
        (line,) = describe(UNUSABLE, audience)
        assert line.startswith(LINE) and "step folders" in line
