"""The free route's "Run it on Kaggle for me", driven by Pilot end to end in practice: the
script pushed to the Kaggle stand-in by kaggle's own client, its state and log streamed on
their own screen, then the Summary with the receipt's verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.pilot_helpers import next_step, on_screen, press, until
from tpuwizard.session.kaggle_route import PRACTICE_ENV
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.route_cards import RouteCards

pytestmark = pytest.mark.slow

MAIN = 'import jax\nprint("devices:", len(jax.devices()), jax.devices()[0].platform)\n'


async def test_run_it_on_kaggle_for_me_streams_the_run_and_ends_on_the_summary(
    tmp_path, monkeypatch
):
    for name in PRACTICE_ENV:  # practice points kaggle at the stand-in: put back after
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("TPUWIZARD_KAGGLE_POLL", "0.1")
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "main.py"
    script.write_text(MAIN)
    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.screen.query_one(RouteCards).choose("notebook")  # the free notebook's card
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")
        field = app.screen.query_one("#kaggle-script")
        field.value = str(tmp_path / "project" / "nope.py")
        await press(pilot, "#kaggle-run")
        said = app.screen.query_one("#kaggle-said")
        await until(pilot, lambda: "No such file" in str(said.render()), 10, "the refusal")
        field.value = str(script)
        await press(pilot, "#kaggle-run")
        await on_screen(pilot, "KaggleRunScreen", 30)
        screen = app.screen
        log, state = screen.query_one("#kaggle-log"), screen.query_one("#kaggle-state")
        await until(pilot, lambda: "[practice] Pushing" in "\n".join(log.lines), 60, "the push")
        await on_screen(pilot, "SummaryScreen", 180)
        lines = "\n".join(log.lines)
        assert "Kaggle: RUNNING" in lines and "devices: 8 cpu" in lines  # as launch prints
        assert "Kaggle: COMPLETE" in str(state.render())
        summary = app.last_summary
        assert summary.finished.ok and summary.receipt.ok and summary.practice
        assert summary.name.startswith("practice-user/tpuwizard-")
        shown = "\n".join(str(line) for line in app.screen.query_one("#summary").lines)
        assert "(proves the run)" in shown and "devices: 8 cpu" in shown
        assert Path(summary.receipt.path).is_file()
        run_dir = Path(summary.receipt.path).parent
        assert run_dir.parent == tmp_path / "runs" and (run_dir / "output.txt").is_file()
        await press(pilot, "#again")
        await on_screen(pilot, "RouteScreen", 10)
    import os

    assert "HTTP_PROXY" not in os.environ  # the wizard's Google sandbox is reached directly
