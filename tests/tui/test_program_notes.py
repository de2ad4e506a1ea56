"""The wizard's "From my program" table says each slice's note as the CLI's does (issue 27, item
14): v4-8's compile-only topology has 8 devices where the running slice shows 4. One place
(program_advice.slice_notes) words it for the CLI, plain mode and the wizard."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Static

from tpuwizard.core.plan import catalog, program_advice
from tpuwizard.core.plan.program_result import summarise
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.program_fit import ProgramFitScreen

RECORD = {
    "devices": 8,  # libtpu's compile-only v4 topology: one device per TensorCore
    "arguments": 2**20,
    "outputs": 2**20,
    "temporaries": 2**20,
    "aliased": 0,
    "code": 2**10,
    "state_bytes": 2**20,
}


def v4_8():
    return summarise(catalog.parse_accelerator("v4-8"), RECORD, "compiled", 0.05, "vm")


def test_the_device_note_is_worded_once_for_every_front_end():
    (note,) = program_advice.slice_notes([v4_8()])
    assert note.startswith("v4-8: libtpu's compile-only topology has 8 devices")
    assert "a running v4-8 shows 4 (no megacore)" in note


async def test_the_wizard_s_program_table_shows_the_v4_8_device_note():
    class Harness(App[None]):
        CSS_PATH = WizardApp.CSS_PATH

        async def on_mount(self) -> None:
            await self.push_screen(ProgramFitScreen())

    app = Harness()
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProgramFitScreen)
        screen.add_result(v4_8())
        screen.finish(None)
        await pilot.pause()
        advice = " ".join(str(screen.query_one("#program-advice", Static).render()).split())
        assert "v4-8: libtpu's compile-only topology has 8 devices where a running v4-8" in advice
