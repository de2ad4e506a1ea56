"""Review's switch row holds every switch and its words whole at 100x32: with both APIs offered
(v6e on demand: Compute Engine, Watchdog, Deeper checks) the last label ran past the screen's
edge. (At 80x24 that row is still 7 columns too wide.)"""

from __future__ import annotations

import pytest
from textual.widgets import Label, Switch

from tests.tui.test_snapshots import Harness
from tpuwizard.tui.state import WizardState


@pytest.mark.parametrize("size", [(100, 32)])
async def test_every_switch_and_its_label_fits_the_row(size):
    from tpuwizard.tui.screens.review import ReviewScreen

    state = WizardState(
        practice=True, project="tpuwizard-practice", zone="us-east5-a", accelerator="v6e-4"
    )
    app = Harness(lambda: ReviewScreen(state), state)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        row = app.screen.query_one("#deep-checks", Switch).parent
        shown = [w for w in row.children if w.display]
        assert len([w for w in shown if isinstance(w, Switch)]) == 3
        for widget in shown:
            region = widget.region
            assert region.right <= size[0], (widget, region)
            if isinstance(widget, Label):  # its words whole, not cut at the edge
                words = str(widget.render())
                assert region.width >= len(words), (words, region)
