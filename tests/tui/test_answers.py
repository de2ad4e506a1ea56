"""What each step is dismissed with reaches the wizard's state: a slice picked from the program,
and the summary's ways on (a new launch starts again at Route, Quit leaves)."""

from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tests.tui.pilot_helpers import (
    next_step,
    on_screen,
    press,
    record_screens,
    until,
    walk_to_capacity,
    walk_to_review,
)
from tpuwizard.tui.answers import ProgramPick
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)


PICKED = "Your program prog.py: its state, 96.56 MiB per device, fits on v5litepod-8"


class PicksV5Litepod8(ModalScreen[ProgramPick | None]):
    """Stands in for "From my program": the compile chose v5litepod-8."""

    def __init__(self, kept_node: str | None = None) -> None:
        super().__init__()

    def on_mount(self) -> None:
        self.dismiss(ProgramPick("v5litepod-8", PICKED, True))


async def test_a_slice_picked_from_the_program_goes_on_to_the_zones(tmp_path, home, monkeypatch):
    """Issue 55: Review says the program's figures on that slice, not the size box's untouched
    48 GiB."""
    from tpuwizard.tui.widgets import program_fit

    monkeypatch.setattr(program_fit, "ProgramFitScreen", PicksV5Litepod8)
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_capacity(pilot)
        await press(pilot, "#from-program")
        await on_screen(pilot, "ZonesScreen", 30)
        assert app.state.accelerator == "v5litepod-8"
        assert app.state.recipe == "bf16-adam"  # the fields as they were, kept
        await until(pilot, lambda: pilot.app.screen.zones, what="the zone survey")
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        verdict = " ".join(str(app.screen.query_one("#fit-verdict", Static).render()).split())
        assert verdict == PICKED and "48.0 GiB" not in verdict


async def refused_launch_summary(pilot) -> None:
    """Create from Review with a quota fault: refused, nothing bills, the summary shows."""
    await walk_to_review(pilot)
    await press(pilot, "#create")
    await until(pilot, lambda: pilot.app.state.finished_code is not None, 60, "the refusal")
    await on_screen(pilot, "SummaryScreen")
    await until(pilot, lambda: pilot.app.screen.query("#again"), 30, "the summary's buttons")


async def test_new_launch_starts_at_route_with_the_new_route_s_defaults(
    tmp_path, home, monkeypatch
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "quota=5")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("right")  # spot, whose deadline is 120 minutes
        await refused_launch_summary(pilot)
        assert app.state.route == "spot" and app.state.deadline.max_run_minutes == 120
        shown = record_screens(app)
        await press(pilot, "#again")
        await on_screen(pilot, "RouteScreen", 30)
        assert shown[0] == "RouteScreen" and app.is_running  # not Review
        await pilot.press("right")  # Flex-start
        await walk_to_review(pilot)
        assert app.state.route == "flex"
        assert app.screen.query_one("#max-run", Input).value == "240"  # its own default


async def test_quit_on_the_summary_leaves_when_nothing_bills(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "quota=5")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await refused_launch_summary(pilot)
        await press(pilot, "#quit")
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert app.return_code == 0
