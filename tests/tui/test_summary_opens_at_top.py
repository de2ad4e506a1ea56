"""The Summary opens at its top at 80x24 (issue 49, the newcomer's round 5): it opened scrolled
to its end, where focusing its first button had taken it, so the verdict was off screen."""

from textual.screen import Screen

from tests.lifecycle_events import planned
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.screens.summary import SummaryScreen


def long_summary() -> RunSummary:
    summary = RunSummary()
    for event in (
        planned("d"),
        *[ev.Check(0, f"check{i}", True, f"detail {i}", "contract") for i in range(7)],
        ev.ReceiptSaved("runs/d/receipt.json", True, "a9b1672804f8c62d"),
        *[ev.ScriptLine(0, f"step {i}: loss 0.{i}") for i in range(12)],
        ev.ScriptFinished(0),
        ev.TeardownVerified("tpuwizard-d", "node", 312.0, 0.416),
        ev.Finished(True, 0, "runs/d", 0.416),
    ):
        summary.apply(event)
    return summary


class Offered(Harness):
    """The Summary as the wizard shows it (launch_view.py): its ways on offered at once."""

    async def on_mount(self) -> None:
        self.run_worker(self.show_summary())

    async def show_summary(self) -> None:
        await self.push_screen(Screen())  # the Teardown step it replaces
        screen = self.make_screen()
        await self.switch_screen(screen)
        screen.offer([])


async def test_the_summary_opens_with_its_verdict_on_screen_at_80x24() -> None:
    app = Offered(lambda: SummaryScreen(long_summary()))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.pause()
        body = app.screen.query_one("#body")
        assert body.max_scroll_y > 0  # more than fits: the case that scrolled
        assert body.scroll_y == 0
        verdict = app.screen.query_one("#verdict")
        assert verdict.region.y >= body.region.y and verdict.region.height > 0
        assert body.region.contains_region(verdict.region)
        assert app.focused is not None and app.focused.id == "again"  # Enter still goes on
