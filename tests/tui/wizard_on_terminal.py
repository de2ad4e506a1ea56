"""``python -m tests.tui.wizard_on_terminal FILE``: the ``tpuwizard --sandbox`` command on this
process's terminal, with Textual's autopilot pressing the keys as far as a node being created;
then it writes the node's name to FILE, for a test that hangs the terminal up."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.tui.pilot_helpers import press, until, walk_to_review
from tpuwizard.cli import main
from tpuwizard.tui.app import WizardApp


def drive_to_a_node_being_created(report: Path) -> None:
    """Every WizardApp run from now on is driven by the autopilot below."""

    async def autopilot(pilot) -> None:
        app = pilot.app
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await until(pilot, lambda: app.billing.existing(), 120, "the node to exist")
        report.write_text(app.billing.existing()[0].name)

    run = WizardApp.run
    WizardApp.run = lambda app, **kwargs: run(app, auto_pilot=autopilot, **kwargs)


if __name__ == "__main__":
    drive_to_a_node_being_created(Path(sys.argv[1]))
    sys.argv = ["tpuwizard", "--sandbox"]
    main()
