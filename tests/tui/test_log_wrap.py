"""At 80x24 a long verifier or script line is folded to the log's width, never cut off at the
edge (Textual's Log does not wrap, so a beginner would have to scroll sideways to read it)."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Log

from tests.tui.pilot_helpers import until
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.run import VerifyScreen, wrap_lines
from tpuwizard.tui.state import WizardState

WORDS = [f"word{i:03d}" for i in range(60)]
LONG = "FAIL numeric " + " ".join(WORDS)  # about 490 characters


class VerifyHarness(App[None]):
    CSS_PATH = WizardApp.CSS_PATH

    def __init__(self) -> None:
        super().__init__()
        self.state = WizardState(practice=True, project="tpuwizard-practice")
        self.billing = BillingState()

    async def on_mount(self) -> None:
        await self.push_screen(VerifyScreen())


async def test_a_long_line_is_folded_to_the_log_width_at_80x24():
    app = VerifyHarness()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.screen.query(Log), 30, "the log")
        app.screen.show(ev.VerifierLine(0, LONG))
        log = app.screen.query_one(Log)
        await until(pilot, lambda: len(log.lines) > 1, 30, "the folded line")
        width = log.scrollable_content_region.width
        assert all(len(line) <= width for line in log.lines)
        assert " ".join(" ".join(log.lines).split()) == LONG  # nothing lost or reordered


def test_short_lines_and_an_unlaid_log_are_left_alone():
    assert wrap_lines(["short", ""], 40) == ["short", ""]
    assert wrap_lines([LONG], 0) == [LONG]
    folded = wrap_lines([LONG], 40)
    assert len(folded) > 1 and all(len(line) <= 40 for line in folded)
    assert all(line.startswith("  ") for line in folded[1:])
