"""The free route, run for the user: the script pushed to Kaggle's TPU (the stand-in in
practice), its state and log streamed with the same lines ``launch --route kaggle`` prints,
then dismissed with the run's summary for the Summary step."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.widgets import Static

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.follow_log import FollowLog
from tpuwizard.words.event_text import describe

TITLE = "[b]Your script on Kaggle's TPU[/b]"


def state_line(event: ev.KernelState) -> str:
    limit = f"session limit {event.limit_s / 60:g} min"
    return f"Kaggle: [b]{event.state}[/b] after {event.elapsed_s:.0f} s ({limit})"


class KaggleRunScreen(WizardScreen[RunSummary]):
    STEP = "Kaggle"
    CAN_GO_BACK = False
    CSS_PATH: ClassVar = "kaggle_run.tcss"
    HELP = (
        "Your script runs as a private Kaggle kernel: pushed, queued, then running on Kaggle's "
        "TPU, its log shown here as it comes. Kaggle ends it at its session limit even if this "
        "computer is off. Then its output comes back to the run folder and the receipt is "
        "checked; the Summary follows."
    )

    def __init__(self, route: Any) -> None:  # a session KaggleRoute
        super().__init__()
        self.route = route
        self.summary = RunSummary()

    def compose_body(self) -> ComposeResult:
        yield Static(TITLE, classes="title")
        yield Static("Starting...", id="kaggle-state")
        yield FollowLog(id="kaggle-log", highlight=False)

    def on_mount(self) -> None:
        self.follow()

    @work(thread=True, exclusive=True, group="kaggle")
    def follow(self) -> None:
        """The route's calls block (a push, a log stream): they run in this thread, and every
        event is shown on the app's."""
        try:
            for event in self.route.events():
                self.summary.apply(event)
                self.app.call_from_thread(self.show, event)
        finally:
            self.route.close()
        self.app.call_from_thread(self.dismiss, self.summary)

    def show(self, event: ev.Event) -> None:
        if isinstance(event, ev.KernelState):
            self.query_one("#kaggle-state", Static).update(state_line(event))
        lines = describe(event, "wizard")
        if lines:
            self.query_one(FollowLog).write_lines(lines)
