"""The wizard's Create runs the preflight first, through the session as `launch` and `up` do: a
FAIL (here: no billing account linked) is shown with its fix, nothing is created, and the way
back is Review."""

from textual.widgets import Static

from tests.tui.pilot_helpers import on_screen, press, sandbox_nodes, walk_to_review
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.hanging_lines import HangingLines


async def test_a_preflight_fail_on_create_shows_its_fix_and_creates_nothing(
    tmp_path, home, monkeypatch
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "no_billing=1")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(100, 32)) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await on_screen(pilot, "PreflightRefusedScreen")
        head = str(app.screen.query_one("#refused", Static).render())
        lines = app.screen.query_one("#preflight-lines", HangingLines).lines
        assert "Nothing was created: 1 check(s) before create failed" in head
        (billing,) = [line for line in lines if line.startswith("FAIL    Billing")]
        assert "Fix: gcloud billing projects link tpuwizard-practice" in billing
        assert sandbox_nodes(home) == {}
        assert Ledger(home / "sandbox" / "ledger.jsonl").entries() == []
        assert app.handle is None  # no launch was started
        await press(pilot, "#back-to-review")
        await on_screen(pilot, "ReviewScreen")
