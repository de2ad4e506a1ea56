""" "From my program..." at the sizes a newcomer's terminal has (issue 49, item 6): the table keeps
its room at 80x24 and 100x32, shapes only (no libtpu) is said once with its install line, a
program without tpuwizard_plan is pointed at the example and the guide, and a kept node is
offered for a measurement."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from textual.app import App
from textual.widgets import Button, DataTable, Static

from tests.conftest import REPO
from tpuwizard.core.plan import fit, program_fit
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.program_fit import PREDICTION_WORDS, SHAPES_WORDS, ProgramFitScreen

pytestmark = pytest.mark.slow

MLP = str(REPO / "examples" / "mlp_adam.py")


class Harness(App[None]):
    CSS_PATH = WizardApp.CSS_PATH

    def __init__(self, program: str, kept_node: str | None = None) -> None:
        super().__init__()
        self.program, self.kept_node = program, kept_node
        self.session: object = None

    async def on_mount(self) -> None:
        await self.push_screen(ProgramFitScreen(self.program, kept_node=self.kept_node))


def text_of(screen: ProgramFitScreen, selector: str) -> str:
    return " ".join(str(screen.query_one(selector, Static).render()).split())


@pytest.fixture
def shapes_only(monkeypatch):
    """This computer without libtpu, as a newcomer's laptop is."""
    monkeypatch.setattr(program_fit, "default_method", lambda: "shapes-only")


@pytest.mark.parametrize("size", [(80, 24), (100, 32)])
async def test_the_table_keeps_its_room_and_shapes_only_is_said_once(size, shapes_only):
    app = Harness(MLP)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, ProgramFitScreen)
        await screen.workers.wait_for_complete()
        await pilot.pause()
        table = screen.query_one("#program-fits", DataTable)
        assert table.row_count == len(fit.select_slices(single_host=True))
        # The header and at least four rows are on screen, inside the dialog.
        assert table.region.height >= 5, table.region
        assert table.region.bottom <= size[1]
        advice = text_of(screen, "#program-advice")
        assert advice.count("no libtpu") == 1 and program_fit.INSTALL_LINE in advice
        assert " ".join(SHAPES_WORDS.split()) in advice
        assert " ".join(PREDICTION_WORDS.split())[:40] not in advice  # nothing was compiled
        assert "Done, shapes only: the state fits on" in text_of(screen, "#program-status")


async def test_a_program_without_tpuwizard_plan_is_pointed_at_the_example_and_the_guide(
    tmp_path, shapes_only
):
    program = tmp_path / "train.py"
    program.write_text("def main():\n    pass\n")
    app = Harness(str(program))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await screen.workers.wait_for_complete()
        await pilot.pause()
        status = text_of(screen, "#program-status")
        assert "defines no function tpuwizard_plan(mesh)" in status
        assert "mlp_adam.py in the examples folder" in status and "docs/guides/fit.md" in status


async def test_a_kept_node_is_offered_and_its_cpu_figures_are_labelled(shapes_only):
    calls = []

    class Kept:
        entry = SimpleNamespace(
            resource=SimpleNamespace(slice=fit.catalog.parse_accelerator("v5litepod-1"))
        )

        def measure(self, program, function, mesh, steps, emit, token):
            calls.append((program.name, function))
            seen = {"platform": "cpu", "device_kind": "cpu", "devices": 1, "process_count": 1}
            return {"at_hand": seen, "measured": {"step_seconds": 0.002, "steps_timed": 5}}, 0

    app = Harness(MLP, kept_node="tpuwizard-k1")
    async with app.run_test(size=(80, 24)) as pilot:
        app.session = SimpleNamespace(kept=SimpleNamespace(open=lambda name: Kept()))
        screen = app.screen
        await screen.workers.wait_for_complete()
        await pilot.pause()
        button = screen.query_one("#measure-node", Button)
        assert not button.disabled and "tpuwizard-k1" in str(button.label)
        screen.measure_on_node()
        await screen.workers.wait_for_complete()
        await pilot.pause()
        status = text_of(screen, "#program-status")
        assert calls == [("mlp_adam.py", "tpuwizard_plan")]
        assert "CPU (practice), not a TPU" in status, status


async def test_no_kept_node_no_offer(shapes_only):
    app = Harness(MLP)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.screen.query("#measure-node")
