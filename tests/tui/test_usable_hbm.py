"""Every wizard screen that says whether a state fits uses the generation's usable HBM from the
catalog (a real v5e chip's bytes_limit, 15.75 GiB), as `fit` does: a 15.5 GiB state fits
v5litepod-1 on Capacity, on Review and in the GKE hand-over's slice (issue 45)."""

from __future__ import annotations

from textual.widgets import Input, Static

from tests.tui.pilot_helpers import on_screen, until, walk_to_capacity
from tests.tui.test_snapshots import Harness
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.routes import Route
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.gke_export import suggested_slice
from tpuwizard.tui.state import WizardState


def _state(**extra) -> WizardState:
    fields = dict(practice=True, project="tpuwizard-practice", zone="us-central1-a")
    return WizardState(**{**fields, **extra})


async def test_capacity_suggests_v5litepod_1_for_15_5_gib(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await walk_to_capacity(pilot)
        app.screen.query_one("#size", Input).value = "15.5"

        def verdict() -> str:
            return " ".join(str(app.screen.query_one("#verdict").render()).split())

        await until(pilot, lambda: "15.5 GiB" in verdict(), what="the fit")
        assert "fits sharded on v5litepod-1" in verdict()


async def test_review_says_15_5_gib_fits_v5litepod_1(tmp_path):
    from tpuwizard.tui.screens.review import ReviewScreen

    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    workload = Workload(script=script)
    state = _state(accelerator="v5litepod-1", route=Route.SPOT, workload=workload, state_gib=15.5)
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "ReviewScreen", 30)
        shown = " ".join(str(app.screen.query_one("#fit-verdict", Static).render()).split())
        assert "fits sharded on v5litepod-1" in shown and "Too small" not in shown


def test_the_gke_hand_over_keeps_v5litepod_1_for_15_5_gib():
    assert suggested_slice(_state(accelerator="v5litepod-1", state_gib=15.5)) == ("v5litepod-1", "")
    # Above what the chip leaves (15.75 GiB), the smallest larger slice is offered instead.
    name, why = suggested_slice(_state(accelerator="v5litepod-1", state_gib=15.9))
    assert name == "v6e-1" and "smallest single slice" in why
