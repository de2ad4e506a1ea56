"""Before Create made anything: the preflight found what would refuse the TPU. Every check's
line (each FAIL with the one command that fixes it), and the way back to Review; nothing was
created. The same checks ``launch`` and ``up`` run (session/preflight.py ``before_create``)."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import Button, Static

from tpuwizard.core.preflight.model import Check
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.hanging_lines import HangingLines


def refusal_lines(checks: list[Check]) -> list[str]:
    """Each FAIL first, with its fix; then the other checks, so the whole picture is there."""
    failed = [c for c in checks if c.failed]
    return [c.line() for c in failed] + [c.line() for c in checks if not c.failed]


class PreflightRefusedScreen(WizardScreen[None]):
    STEP = "6 Before create"
    HELP = (
        "Before creating anything, tpuwizard checks what would refuse the TPU (APIs, billing, "
        "quota, OS Login, external IPs, the zone's offer). A FAIL stops the create: nothing was "
        "made and nothing bills. Run the fix shown, then Create again from Review. An UNKNOWN "
        "(could not tell) never stops it."
    )

    def __init__(self, checks: list[Check]) -> None:
        super().__init__()
        self.checks = checks
        # Set when the user goes back (the button or Esc): the app then shows Review again.
        self.gone_back: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def compose_body(self) -> ComposeResult:
        failed = sum(c.failed for c in self.checks)
        head = (
            f"Nothing was created: {failed} check(s) before create failed. Each FAIL says how "
            "to fix it; then Create again."
        )
        yield Static(Text(head, style="bold"), id="refused")
        yield HangingLines(refusal_lines(self.checks), id="preflight-lines")
        yield Button("Back to Review", id="back-to-review", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#back-to-review", Button).focus()

    @on(Button.Pressed, "#back-to-review")
    def action_back(self) -> None:
        if not self.gone_back.done():
            self.gone_back.set_result(None)
