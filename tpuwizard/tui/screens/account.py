"""Step 2: who and where. What was detected, what is missing (with the command that fixes it),
and practice mode, chosen by itself when there are no credentials."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import Button, Input, Label, Static, Switch

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.errors import BadInput
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT
from tpuwizard.tui.answers import AccountAnswer
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.typed_input import TypedInput
from tpuwizard.words.preflight_text import project_preflight_words

if TYPE_CHECKING:
    from tpuwizard.core.preflight.model import Check


class AccountScreen(WizardScreen[AccountAnswer]):
    STEP = "2 Account"
    HELP = (
        "tpuwizard reads your project, zone and account like gcloud does. Without Google "
        "credentials it runs in practice mode against a local sandbox, so you can rehearse "
        "the whole walk at no cost."
    )

    def __init__(
        self,
        ctx: gcloud_config.GcloudContext,
        practice: bool,
        project: str | None = None,
        real_refusal: str | None = None,
        preflight: Callable[[], list[Check]] | None = None,
    ) -> None:
        """``practice`` and ``project``: as the session decided; ``real_refusal``: why real mode
        cannot be chosen now (the session's ``mode.real_refusal``), or None; ``preflight``: the
        session's checks of that project, run off the UI thread (None: none shown)."""
        super().__init__()
        self.ctx, self.practice, self.real_refusal = ctx, practice, real_refusal
        self.preflight = preflight
        # The project each position of the switch starts with: flipping it swaps them, unless
        # the user typed another.
        self.projects = {
            True: (project if practice else None) or PRACTICE_PROJECT,
            False: (None if practice else project) or ctx.project or "",
        }
        self.project = project or ""

    def compose_body(self) -> ComposeResult:
        ctx = self.ctx
        # Two facts a line, so 80x24 holds the step with its fixes and Next.
        found = [
            f"project: {ctx.project or '-'} ({ctx.project_source or 'not set'}); "
            f"zone: {ctx.zone or '-'} ({ctx.zone_source or 'not set'})",
            f"account: {ctx.account or '-'}; credentials: {ctx.credentials or 'none found'}",
        ]
        yield Static("[b]Your Google Cloud setup[/b]\n" + "\n".join(found), id="found")
        if ctx.problems:
            # Each command on a line of its own, so a narrow terminal never breaks one apart.
            fixes = "\n".join(f"  {what}, run:\n    {cmd}" for what, cmd in ctx.problems)
            yield Static(
                f"[b]Missing[/b]\n{fixes}\n  and make sure the API is on:\n"
                "    gcloud services enable tpu.googleapis.com",
                id="missing",
            )
        with Horizontal(classes="row"):
            yield Switch(value=self.practice, id="practice")
            yield Label(practice_label(self.practice), id="practice-label", classes="switch-label")
        project = TypedInput(value=self.project, placeholder="my-project-123", id="project")
        project.border_title = "Project id"
        yield project
        if self.preflight is not None and self.project:
            yield Static(f"Project preflight of {self.project}: checking…", id="preflight")
        yield Static(id="error")
        yield Button("Next", id="next", variant="primary")

    def on_mount(self) -> None:
        # Focus starts where Enter goes on (the previous step's Enter was Next too): on Next,
        # or on the project field while real mode still needs one typed (Enter there submits).
        needs_project = not self.practice and not self.project
        self.query_one("#project" if needs_project else "#next").focus()
        if self.preflight is not None and self.project:
            self.check_project()

    @work(thread=True, exclusive=True, group="preflight", exit_on_error=False)
    def check_project(self) -> None:
        """As Zones loads its survey: the checks read the cloud, so never on the UI thread."""
        assert self.preflight is not None
        checks = self.preflight()
        self.app.call_from_thread(self.show_preflight, checks)

    def show_preflight(self, checks: list[Check]) -> None:
        # Next may have been pressed already: neither UNKNOWN nor FAIL holds the walk.
        with contextlib.suppress(NoMatches):
            self.query_one("#preflight", Static).update(
                project_preflight_words(self.project, checks)
            )

    @on(Switch.Changed, "#practice")
    def say_practice(self, event: Switch.Changed) -> None:
        self.query_one("#practice-label", Label).update(practice_label(event.value))
        field = self.query_one("#project", Input)
        if field.value.strip() == self.projects[not event.value]:
            field.value = self.projects[event.value]

    @on(Button.Pressed, "#next")
    @on(Input.Submitted, "#project")
    def submit(self) -> None:
        practice = self.query_one("#practice", Switch).value
        project = self.query_one("#project", Input).value.strip()
        error = self.query_one("#error", Static)
        if not practice:
            if self.real_refusal:
                error.update(f"{self.real_refusal}, or keep practice mode on.")
                return
            try:
                gcloud_config.validate_project(project)
            except BadInput as err:
                error.update(str(err))
                return
        self.dismiss(AccountAnswer(practice, project or None))


def practice_label(on: bool) -> str:
    """The switch's state in words: a switch's colour alone does not say on or off; and what
    that position means, which for OFF is real, billed resources."""
    if on:
        return "Practice mode: ON (local sandbox, nothing real, nothing billed)"
    return "Practice mode: OFF (real: creates billed resources)"
