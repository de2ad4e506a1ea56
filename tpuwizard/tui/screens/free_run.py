"""The free route, run for the user: the script pushed to Kaggle's TPU, or run on a Colab TPU
runtime through Google's colab CLI (the stand-ins in practice), its state and log streamed with
the same lines ``launch --route kaggle|colab`` prints, then dismissed with the run's summary for
the Summary step. Colab's screen is Kaggle's with Colab's words and no close of its own (the
session is stopped as the run's last step)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.widgets import Static

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.colab import ColabPlanned, ColabSessionReady, ColabSessionStopped
from tpuwizard.core.launch.events.kaggle import KernelState
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.screens.run import wrap_lines
from tpuwizard.tui.widgets.follow_log import FollowLog
from tpuwizard.words.event_text import describe

TITLE = "[b]Your script on Kaggle's TPU[/b]"
MIN_WIDTH = 20  # a log narrower than this is not laid out yet (wrap_lines leaves it alone)


def state_line(event: KernelState) -> str:
    limit = f"session limit {event.limit_s / 60:g} min"
    return f"Kaggle: [b]{event.state}[/b] after {event.elapsed_s:.0f} s ({limit})"


class KaggleRunScreen(WizardScreen[RunSummary]):
    STEP = "Kaggle"
    CAN_GO_BACK = False
    CSS_PATH: ClassVar = "free_run.tcss"
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
        self.gone = threading.Event()  # the screen was removed (the wizard quit)
        self.app_: App[Any] | None = None  # the app, for the thread that follows the run
        self.last_state: str | None = None  # Kaggle's last state for the session, as shown
        self.unwritten: list[str] = []  # lines for the log, waiting for it to have a width

    def compose_body(self) -> ComposeResult:
        yield Static(TITLE, classes="title")
        yield Static("Starting...", id="kaggle-state")
        yield FollowLog(id="kaggle-log", highlight=False)

    def on_mount(self) -> None:
        # A daemon thread, not a Textual worker: the route's calls block (a push, a queued
        # kernel's polls, its log stream) and none can be interrupted, and the app waits for its
        # workers as it exits. Quitting here leaves the kernel on Kaggle, its ledger record
        # open: `tpuwizard status` lists it.
        self.app_ = self.app
        threading.Thread(target=self.follow, name="kaggle-run", daemon=True).start()

    def on_unmount(self) -> None:
        self.gone.set()

    def follow(self) -> None:
        """Every event of the route, shown on the app's thread while this screen is up."""
        try:
            for event in self.route.events():
                self.summary.apply(event)
                if not self.tell(self.show, event):
                    return
        finally:
            self.route.close()
        self.tell(self.dismiss, self.summary)

    def tell(self, call: Callable[..., object], *args: object) -> bool:
        """``call`` on the app's thread; False once the screen or the app is gone."""
        app = self.app_
        if self.gone.is_set() or app is None:
            return False
        try:
            app.call_from_thread(call, *args)
        except RuntimeError:  # the app stopped between the check and the call
            return False
        return True

    def show(self, event: ev.Event) -> None:
        if isinstance(event, KernelState):
            self.last_state = event.state
            self.query_one("#kaggle-state", Static).update(state_line(event))
        self.write(describe(event, "wizard"))

    def write(self, lines: list[str]) -> None:
        """Lines into the log, each folded to its width (a Log never wraps: a long line of
        Kaggle's or the script's was cut at the panel's edge)."""
        self.unwritten += lines
        self.flush()

    def flush(self, tries: int = 10) -> None:
        """The lines not yet written, in order; before the log has a width (the first lines
        can come before it is laid out), after the next refresh."""
        if not self.unwritten:
            return
        log = self.query_one(FollowLog)
        width = log.scrollable_content_region.width
        if width < MIN_WIDTH and tries:
            self.call_after_refresh(self.flush, tries - 1)
            return
        lines, self.unwritten = self.unwritten, []
        log.write_lines(wrap_lines(lines, width))


COLAB_STEPS = {
    ColabPlanned: "Asking Colab for a TPU runtime...",
    ColabSessionReady: "Session ready: the verifier, then your script...",
    ColabSessionStopped: "Session stopped.",
}


class ColabRunScreen(KaggleRunScreen):
    STEP = "Colab"
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
        if type(event) in COLAB_STEPS:
            self.query_one("#kaggle-state", Static).update(COLAB_STEPS[type(event)])
        self.write(describe(event, "wizard"))

    def on_mount(self) -> None:
        # Textual calls Kaggle's on_mount (which starts the run) itself, as it calls every
        # class's handler: calling it here too started the run twice.
        self.query_one(".title", Static).update("[b]Your script on Colab's TPU[/b]")
