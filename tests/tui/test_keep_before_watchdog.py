"""Keep while the node is still being made: kept only once its watchdog is armed, as Review
promised; a stop before then deletes it (issue "Every path keeps the promise", item 2)."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.pilot_helpers import on_screen, press, until, walk_to_review
from tests.tui.test_money_guard import SIZE, ledger_ops
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.tui.app import WizardApp


async def test_keep_while_creating_waits_for_the_watchdog_then_keeps(tmp_path, home, monkeypatch):
    from tests.integration.iterate_helpers import stop_lasting_sandbox

    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "3")  # long enough to keep while CREATING
    app = WizardApp(run_dir=tmp_path / "runs")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await walk_to_review(pilot)
            assert app.screen.query_one("#watchdog").value  # Review promises a watchdog
            await press(pilot, "#create")
            await until(pilot, lambda: app.billing.existing(), 60, "the node to exist")
            (node,) = app.billing.existing()
            await pilot.press("ctrl+q")
            await on_screen(pilot, "QuitGuard")
            app.screen.query_one("#confirm-name", Input).value = node.name
            await press(pilot, "#keep")
            await until(pilot, lambda: not app.is_running, 180, "the exit")
        kept = [e for e in Ledger(home / "sandbox" / "ledger.jsonl").entries() if e.op == "kept"]
        assert ledger_ops(home)[node.name] == "kept"
        assert kept[-1].extra.get("deadline") is not None, "kept with no watchdog armed"
    finally:
        stop_lasting_sandbox(home)
