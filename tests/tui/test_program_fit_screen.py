"""The capacity screen's "From my program": the table fills slice by slice from real compiles,
a row picks the slice, and Cancel stops the compiler."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Button, DataTable, Input, Static

from tests.conftest import REPO
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.plan import fit, program_fit
from tpuwizard.tui.answers import CapacityAnswer
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.state import WizardState

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not program_fit.libtpu_installed(), reason="libtpu is not installed"),
]

PLACEMENT = str(REPO / "examples" / "placement.py")


class CapacityHarness(App[None]):
    CSS_PATH = WizardApp.CSS_PATH

    def __init__(self) -> None:
        super().__init__()
        self.state = WizardState(practice=True, project="tpuwizard-practice")
        self.billing = BillingState()  # what the status bar reads: nothing exists here
        self.chosen: object = None

    async def on_mount(self) -> None:
        from tpuwizard.tui.screens.capacity import CapacityScreen

        def done(result: object) -> None:
            self.chosen = result

        await self.push_screen(CapacityScreen(48, "v5litepod-4"), done)


async def test_from_my_program_fills_the_table_and_a_row_picks_the_slice():
    app = CapacityHarness()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.click("#from-program")
        screen = app.screen
        screen.query_one("#program-path", Input).value = PLACEMENT
        await pilot.click("#compile")
        table = screen.query_one("#program-fits", DataTable)
        names = [s.name for s in fit.select_slices(single_host=True)]
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == names
        assert all(table.get_row_at(i)[5] == "yes" for i in range(table.row_count))
        assert "Done: fits on" in str(screen.query_one("#program-status", Static).render())
        advice = " ".join(str(screen.query_one("#program-advice", Static).render()).split())
        assert "Compiled with this computer's JAX" in advice  # which JAX compiled, said
        table.focus()
        table.move_cursor(row=names.index("v6e-4"))
        await pilot.press("enter")
        await pilot.pause()
    assert isinstance(app.chosen, CapacityAnswer) and app.chosen.program is not None
    assert app.chosen == CapacityAnswer(48, "v6e-4", "", "bf16-adam", app.chosen.program)
    # Issue 55: the program's own figures on the slice picked go on to Review.
    assert app.chosen.program.fits and app.chosen.program.verdict.startswith(
        "Your program placement.py: its state, 140 B per device; its step's peak"
    )


async def test_cancel_stops_the_compiles():
    app = CapacityHarness()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.click("#from-program")
        screen = app.screen
        screen.query_one("#program-path", Input).value = str(REPO / "examples" / "mlp_adam.py")
        await pilot.click("#compile")
        planner = screen.planner
        await pilot.click("#cancel")
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert planner._proc is None or planner._proc.wait(timeout=30) != 0  # killed
        assert screen.query_one("#cancel", Button).disabled
        rows = screen.query_one("#program-fits", DataTable).row_count
        assert rows < len(fit.select_slices(single_host=True))


async def test_a_missing_file_is_named():
    app = CapacityHarness()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.click("#from-program")
        screen = app.screen
        screen.query_one("#program-path", Input).value = "no/such/file.py"
        await pilot.click("#compile")
        await pilot.pause()
        status = str(screen.query_one("#program-status", Static).render())
        assert "no/such/file.py is not a file" in status
