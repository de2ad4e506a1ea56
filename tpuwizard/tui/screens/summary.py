"""The last step: what the run came to, kept on screen until the user moves on.

Every check with PASS or FAIL, the receipt's hash and path, the script's exit code and last
lines, the files copied back, the cost and whether anything still bills: the same lines plain
mode and the CLI print (``event_text.summary_lines``), folded by the core's ``RunSummary``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, Static

from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.host import host
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.hanging_lines import HangingLines
from tpuwizard.words.bill_words import still_running, still_running_head
from tpuwizard.words.kept_text import kept_elsewhere, kept_line
from tpuwizard.words.summary_text import summary_lines


def headline(summary: RunSummary, kept_before: Sequence[str] = ()) -> str:
    """One line on top, in words: whether anything still bills (``kept_before``: the names of
    nodes kept earlier, which this run leaves as they are). Practice bills nothing: what
    still exists is said to run, not billed (the summary's practice, the plan's)."""
    practice = summary.practice
    if summary.nothing_billing and kept_before:
        names = ", ".join(kept_before)
        return (
            f"Nothing from this run is billing. Kept earlier, {still_running(practice)}: {names}."
        )
    if summary.nothing_billing:
        return "Nothing is billing."
    if summary.finished is None:
        return "The launch did not finish: check with tpuwizard status."
    unseen = summary.finished.unseen
    billing = [n for n in summary.still_existing if n not in unseen]
    said = [f"{still_running_head(practice)}: {', '.join(billing)}."] if billing else []
    if unseen:  # their creates' answers were lost: no evidence that they exist
        said.append(f"MAY EXIST (never seen): {', '.join(unseen)}.")
    return " ".join(said)


@dataclass(frozen=True)
class SummaryChoice:
    """The way on: a new launch (back to Review), quit, or the same launch in ``zone``."""

    kind: Literal["again", "quit", "zone"]
    zone: str | None = None


class SummaryScreen(WizardScreen[None]):
    STEP = "10 Summary"
    CAN_GO_BACK = False
    HELP = (
        "What the run came to. The receipt proves it ran; its hash is checked by "
        "tpuwizard receipt check. From here you can start another launch, try another zone, "
        "or quit."
    )

    def __init__(self, summary: RunSummary) -> None:
        super().__init__()
        self.summary = summary
        self.choice: asyncio.Future[SummaryChoice] = asyncio.get_running_loop().create_future()
        # Each button's way on, by its id.
        self.ways = {"again": SummaryChoice("again"), "quit": SummaryChoice("quit")}

    def compose_body(self) -> ComposeResult:
        app = host(self)
        # Nodes kept earlier bill on beside this run's result: said with price and deadline.
        ours = self.summary.kept[-1].name if self.summary.kept else None
        before = kept_elsewhere(app.billing, ours)
        stays = [kept_line(b, app.state.practice) for b in before]
        verdict = headline(self.summary, [b.name for b in before])
        yield Static(Text(verdict, style="bold"), id="verdict")
        # Folded with a hanging indent, so each line's place in the outline survives 80 columns.
        yield HangingLines(summary_lines(self.summary, "wizard", stays), id="summary")
        yield Horizontal(id="choices")

    def offer(self, zones: list[str]) -> None:
        """The ways on; a stockout adds the other zones."""
        box = self.query_one("#choices", Horizontal)
        for zone in zones[:3]:
            box.mount(Button(f"Try {zone}", id=f"zone-{zone}"))
            self.ways[f"zone-{zone}"] = SummaryChoice("zone", zone)
        box.mount(Button("New launch", id="again", variant="primary"))
        box.mount(Button("Quit", id="quit"))
        self.call_after_refresh(self.focus_first_choice)

    def focus_first_choice(self) -> None:
        """Focus the first way on without scrolling to it: the Summary opens at its top, the
        verdict first (at 80x24 the buttons sit below the fold, and focusing one would scroll
        the verdict away); Tab or PageDown reach them."""
        buttons = self.query(Button)
        if buttons:
            buttons.first().focus(scroll_visible=False)
        self.query_one("#body").scroll_home(animate=False, immediate=True)

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        way = self.ways.get(event.button.id or "")
        if way is not None and not self.choice.done():
            self.choice.set_result(way)
