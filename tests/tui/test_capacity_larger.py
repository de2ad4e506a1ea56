"""The wizard's Capacity, when no single-host slice it lists holds the state: it names the
smallest larger slice that does and that launch makes it: one answer, no hand-over (issue 55)."""

import pytest
from textual.widgets import Input

from tests.tui.pilot_helpers import until, walk_to_capacity
from tpuwizard.tui.app import WizardApp


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_capacity_names_the_larger_slice_and_export_when_nothing_listed_holds(tmp_path, size):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=size) as pilot:
        await walk_to_capacity(pilot)
        app.screen.query_one("#size", Input).value = "3100"

        def verdict() -> str:
            return " ".join(str(app.screen.query_one("#verdict").render()).split())

        await until(pilot, lambda: "None of these holds 3100.0 GiB" in verdict(), what="the fit")
        assert "smallest single slice that does: tpu7x-64 (32 chips, 8 VMs" in verdict()
        assert "launch can make it" in verdict() and "export" not in verdict()  # one answer
        next_button = app.screen.query_one("#next").region  # the longer verdict hides nothing
        assert next_button.height > 0 and next_button.bottom <= app.size.height - 1
