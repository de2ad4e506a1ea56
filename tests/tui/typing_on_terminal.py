"""``python -m tests.tui.typing_on_terminal FOLDER``: the ``tpuwizard --sandbox`` command on this
process's terminal, with Textual's autopilot walking to Review, for a test that types there.

The autopilot says ``FOLDER/ready`` once the Name field has the focus, then holds the app's loop,
as a busy app would (drawing, a table rebuilt), until the test has typed (``FOLDER/typed``) and the
terminal has handed every byte to Textual's input thread: then the whole burst waits in the app's
queue, as a fast typist's or a paste's keys do. Once they are handled, the fields' values go to
``FOLDER/values.json`` and the wizard exits."""

from __future__ import annotations

import array
import asyncio
import fcntl
import json
import sys
import termios
import time
from pathlib import Path

from tests.tui.pilot_helpers import walk_to_review
from tpuwizard.cli import main
from tpuwizard.tui.app import WizardApp

FIELDS = ("name", "max-run")


def unread_input() -> int:
    """How many bytes the terminal holds that no one has read yet."""
    count = array.array("i", [0])
    fcntl.ioctl(sys.stdin.fileno(), termios.FIONREAD, count)
    return count[0]


def hold_until_typed(folder: Path) -> None:
    """Block the app's loop (deliberately synchronous) until the keys are all read."""
    while not (folder / "typed").exists() or unread_input():
        time.sleep(0.01)
    time.sleep(0.2)  # for the input thread to hand the last key it read to the app


def type_on_review(folder: Path) -> None:
    async def autopilot(pilot) -> None:
        app = pilot.app
        await walk_to_review(pilot)
        assert app.focused is app.screen.query_one("#name")
        (folder / "ready").write_text("")
        hold_until_typed(folder)
        values: dict[str, str] = {}
        while True:  # until the burst is handled: the values and the focus stop changing
            await pilot.pause()
            await asyncio.sleep(0.2)
            now = {f: app.screen.query_one(f"#{f}").value for f in FIELDS}
            now["focused"] = app.focused.id if app.focused else ""
            if now == values:
                break
            values = now
        # Written whole, then named: the test waits for the name and reads at once.
        (folder / "values.part").write_text(json.dumps(values))
        (folder / "values.part").rename(folder / "values.json")
        app.exit(0)

    run = WizardApp.run
    WizardApp.run = lambda app, **kwargs: run(app, auto_pilot=autopilot, **kwargs)


if __name__ == "__main__":
    type_on_review(Path(sys.argv[1]))
    sys.argv = ["tpuwizard", "--sandbox"]
    main()
