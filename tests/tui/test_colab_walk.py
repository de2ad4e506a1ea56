"""The free route's "Run it on Colab for me", driven by Pilot end to end in practice: the script
run through the stand-in colab program, its lines streamed on their own screen, the session
stopped, then the Summary with the receipt's verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.pilot_helpers import next_step, on_screen, press, until
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.route_cards import RouteCards

pytestmark = pytest.mark.slow

MAIN = 'import jax\nprint("devices:", len(jax.devices()), jax.devices()[0].platform)\n'


async def test_run_it_on_colab_for_me_streams_the_run_and_ends_on_the_summary(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("TPUWIZARD_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("TPUWIZARD_COLAB_FAULTS", raising=False)
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "main.py"
    script.write_text(MAIN)
    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.screen.query_one(RouteCards).choose("notebook")  # the free notebook's card
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")
        app.screen.query_one("#kaggle-script").value = str(script)
        # Issue 55.11: Colab's CLI installs no packages; the step says so, and runs nothing.
        app.screen.query_one("#free-packages").value = "optax"
        await press(pilot, "#colab-run")
        said = app.screen.query_one("#kaggle-said")
        await until(pilot, lambda: "installs no packages" in str(said.render()), 30, "refusal")
        app.screen.query_one("#free-packages").value = ""
        await press(pilot, "#colab-run")
        await on_screen(pilot, "ColabRunScreen", 30)
        log = app.screen.query_one("#kaggle-log")
        await until(pilot, lambda: "[practice] Asking" in "\n".join(log.lines), 60, "the ask")
        try:
            await on_screen(pilot, "SummaryScreen", 180)
        except AssertionError as late:  # say what the run printed, and any error the walk hit
            walk = [w.error for w in app.workers if w.error is not None]
            raise AssertionError(f"{late}; the run printed: {list(log.lines)}; {walk}") from None
        lines = "\n".join(log.lines)
        failure = app.last_summary.failure  # why, when it did not run
        assert "devices: 1 cpu" in lines, (lines, failure)  # as launch --route colab prints it
        assert lines.count("[practice] Asking") == 1, lines  # one run, never started twice
        assert "colab sessions no longer lists it" in lines
        summary = app.last_summary
        assert summary.finished.ok and summary.receipt.ok and summary.practice
        assert summary.name.startswith("tpuwizard-") and summary.zone == "Colab"
        run_dir = Path(summary.receipt.path).parent
        assert run_dir.parent == tmp_path / "runs" and (run_dir / "output.txt").is_file()
        # The Summary says what the run did: the receipt's checks, the script's exit, the
        # session stopped and verified (never "did not finish", "Nothing was created").
        shown = " ".join(" ".join(str(x) for x in app.screen.query_one("#summary").lines).split())
        assert "Checks: 7 of 7 PASS" in shown and "Your script: exit 0." in shown
        assert f"Session {summary.name} stopped: colab sessions no longer lists it" in shown
        for wrong in ("Checks: none ran", "did not finish", "Nothing was created"):
            assert wrong not in shown
        await press(pilot, "#again")
        await on_screen(pilot, "RouteScreen", 30)
    from tpuwizard.session.free.colab import colab_ledger

    assert colab_ledger().held() == []
