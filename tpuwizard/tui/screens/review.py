"""Step 5: review and create. The name is checked as you type; nothing is created before Create."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Input, Label, Static, Switch

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan import DEFAULT_MAX_RUN
from tpuwizard.core.plan import catalog, cost
from tpuwizard.event_text import money
from tpuwizard.tui.screens.base import WizardScreen


class ReviewScreen(WizardScreen):
    STEP = "5 Review"
    HELP = (
        "Check what will be created. The deadline is Flex-start's maximum run duration; for "
        "other routes it is shown so you know how long you meant to run. Optionally give a "
        "script of yours to run after the verifier, and files it writes to copy back. Deeper "
        "checks add the verifier's precision profile and a profiler trace (open it with "
        "TensorBoard's profile plugin, xprof or Perfetto)."
    )

    def __init__(self, state) -> None:  # WizardState
        super().__init__()
        self.state = state

    def compose_body(self) -> ComposeResult:
        s = self.state
        slice_ = catalog.parse_accelerator(s.accelerator)
        hourly = cost.hourly(s.accelerator, s.route)
        yield Static(
            f"[b]About to create[/b] {s.accelerator} ({slice_.chips} chips, {slice_.vms} VM) in "
            f"{s.zone}, project {s.project}, route {s.route}, runtime "
            f"{slice_.generation.runtime_version}.\nAbout {money(hourly)}/h: an "
            f"{cost.label()}."
            + ("\n[b]Practice: the sandbox; nothing is billed.[/b]" if s.practice else ""),
            id="summary",
        )
        with Horizontal(classes="row"):
            yield _titled(
                Input(value=s.name or "", placeholder="tpuwizard-<run id>", id="name"), "Name"
            )
            yield _titled(
                Input(value=str(s.max_run_minutes or DEFAULT_MAX_RUN[s.route]), id="max-run"),
                "Deadline (minutes)",
            )
        if s.route in ("vm", "spot"):
            with Horizontal(classes="row"):
                yield Switch(value=s.watchdog, id="watchdog")
                yield Label(
                    "Watchdog: the VM deletes itself at the deadline, even if this computer is off",
                    id="watchdog-label",
                )
        with Horizontal(classes="row"):
            yield Switch(value=s.deep_checks, id="deep-checks")
            yield Label(
                "Deeper checks: a precision profile and a profiler trace, in the run folder",
                id="deep-checks-label",
            )
        with Horizontal(classes="row"):
            yield _titled(
                Input(value=str(s.script or ""), placeholder="path/to/main.py", id="script"),
                "Your script (optional)",
            )
            yield _titled(
                Input(value=",".join(s.fetch), placeholder="reports/*.json", id="fetch"),
                "Files it writes, to copy back",
            )
        yield Static(id="error")
        yield Button("Create", id="create", variant="success")

    @on(Input.Changed, "#name")
    def check_name(self, event: Input.Changed) -> None:
        error = self.query_one("#error", Static)
        try:
            if event.value:
                gcloud_config.validate_node_name(event.value)
            error.update("")
        except BadInput as err:
            error.update(str(err))

    @on(Button.Pressed, "#create")
    def create(self) -> None:
        error = self.query_one("#error", Static)
        name = self.query_one("#name", Input).value.strip() or None
        script = self.query_one("#script", Input).value.strip()
        try:
            if name:
                gcloud_config.validate_node_name(name)
            max_run = int(self.query_one("#max-run", Input).value)
            if not 1 <= max_run <= 7 * 24 * 60:
                raise ValueError
            if script and not Path(script).is_file():
                raise BadInput(f"{script} is not a file.")
        except ValueError as err:
            error.update(
                str(err)
                if isinstance(err, BadInput)
                else "The deadline is a number of minutes from 1 to 10080."
            )
            return
        fetch = tuple(
            p.strip() for p in self.query_one("#fetch", Input).value.split(",") if p.strip()
        )
        watchdog = bool(self.query("#watchdog")) and self.query_one("#watchdog", Switch).value
        self.dismiss(
            {
                "name": name,
                "max_run_minutes": max_run,
                "watchdog": watchdog,
                "deep_checks": self.query_one("#deep-checks", Switch).value,
                "script": Path(script) if script else None,
                "fetch": fetch,
            }
        )


def _titled(widget: Input, title: str) -> Input:
    widget.border_title = title  # the label sits on the field's border: compact, and readable
    return widget
