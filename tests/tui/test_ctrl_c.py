"""Ctrl+C is a beginner's stop key: it takes the same way out as Ctrl+Q (the quit guard when
anything may bill), never Textual's own "press ctrl+q to quit" note (newcomer round 5, N11l)."""

from __future__ import annotations

from tests.tui.pilot_helpers import until, walk_to_review
from tpuwizard.tui.app import WizardApp


async def test_ctrl_c_on_review_quits_as_ctrl_q_does_when_nothing_bills(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(100, 32)) as pilot:
        await walk_to_review(pilot)
        assert not app.billing.may_bill()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, 30, "the app to end")
    assert app.return_code == 0
