"""The free route, run for the user on Colab: the script run on a Colab TPU runtime through
Google's colab CLI (the stand-in in practice), its lines streamed as ``launch --route colab``
prints them, then dismissed with the run's summary for the Summary step. Kaggle's run screen,
with Colab's words and no close of its own (the session is stopped as the run's last step)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.widgets import Static

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens import kaggle_run
from tpuwizard.tui.screens.kaggle_run import KaggleRunScreen
from tpuwizard.tui.widgets.follow_log import FollowLog
from tpuwizard.words.event_text import describe

STEPS = {
    ev.ColabPlanned: "Asking Colab for a TPU runtime...",
    ev.ColabSessionReady: "Session ready: the verifier, then your script...",
    ev.ColabSessionStopped: "Session stopped.",
}


class ColabRunScreen(KaggleRunScreen):
    STEP = "Colab"
    CSS_PATH: ClassVar = str(Path(kaggle_run.__file__).with_name("kaggle_run.tcss"))
    HELP = (
        "Your script runs on a Colab TPU runtime through Google's colab CLI: a named session is "
        "made, your folder uploaded, the verifier then your script run, the receipt and the "
        "output downloaded to the run folder, and the session stopped whatever happens. "
        "Quitting here leaves the session running: `tpuwizard status` lists it and "
        "`tpuwizard teardown` stops it."
    )

    def follow(self) -> None:
        """Every event of the route, shown on the app's thread while this screen is up."""
        for event in self.route.events():
            self.summary.apply(event)
            if not self.tell(self.show, event):
                return
        self.tell(self.dismiss, self.summary)

    def show(self, event: ev.Event) -> None:
        if type(event) in STEPS:
            self.query_one("#kaggle-state", Static).update(STEPS[type(event)])
        lines = describe(event, "wizard")
        if lines:
            self.query_one(FollowLog).write_lines(lines)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(".title", Static).update("[b]Your script on Colab's TPU[/b]")
