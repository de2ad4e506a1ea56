"""The Colab screen says how to upload the notebook, and "Run all" once (issue 27, item 14)."""

from __future__ import annotations


async def test_the_colab_screen_says_how_to_upload_and_run_all_once(tmp_path):
    from textual.widgets import Static

    from tests.tui.pilot_helpers import on_screen, press
    from tests.tui.test_snapshots import Harness
    from tpuwizard.tui.screens.notebook import NotebookScreen

    app = Harness(lambda: NotebookScreen(tmp_path))
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "NotebookScreen", 30)
        await press(pilot, "#write")
        await pilot.pause()
        steps = " ".join(str(app.screen.query_one("#steps", Static).render()).split())
    assert "File → Upload notebook" in steps
    assert steps.count("Run all") == 1, steps
    assert str(tmp_path / "tpuwizard-colab.ipynb") in steps
