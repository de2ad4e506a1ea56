"""A node kept on purpose earlier (`tpuwizard up`) stays kept whatever the wizard does: a stop
signal on its first screen ends the wizard and leaves the node, said in the parting line."""

from __future__ import annotations

import signal

import pytest

from tests.integration.iterate_helpers import down, stop_lasting_sandbox, up
from tests.tui.pilot_helpers import on_screen, press, sandbox_nodes, until, walk_to_review
from tests.tui.test_kept_heartbeats import status_bar_text
from tests.tui.test_quit_summary import finish_messages
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.run import ProvisionScreen

SIZE = (100, 32)


async def test_a_stop_signal_on_the_first_screen_leaves_a_kept_node_kept(
    tmp_path, home, monkeypatch
):
    name = up(tmp_path, "--idle", "30")["name"]
    try:
        app = WizardApp(run_dir=tmp_path / "runs")
        said = finish_messages(app, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "RouteScreen")
            await until(pilot, lambda: "KEPT" in status_bar_text(app), 60, "the kept node shown")
            app.on_signal(signal.SIGTERM)  # what the loop's handler calls
            await until(pilot, lambda: not app.is_running, 60, "the exit")
        assert app.return_code == 128 + signal.SIGTERM
        assert any(key.endswith(f"/nodes/{name}") for key in sandbox_nodes(home)), (
            "the stop deleted a node kept on purpose"
        )
        (message,) = said
        assert message is not None
        assert f"{name} (v5litepod-1) in us-central1-a stays kept" in message
        assert f"tpuwizard down --sandbox {name}" in message
    finally:
        down(tmp_path, name)
        stop_lasting_sandbox(home)


@pytest.mark.rotating("kept-node-e2e")
async def test_a_launch_beside_a_kept_node_says_what_it_made_and_what_still_bills(
    tmp_path, home, monkeypatch
):
    """Issue 31, item 5: Provision names the node it is making, and the Summary says nothing of
    this run bills while the kept node does, with its price and deadline."""
    name = up(tmp_path, "--idle", "30")["name"]
    shown: list[str] = []  # each state line Provision drew (it passes fast in practice)
    tick = ProvisionScreen.tick

    def recording_tick(screen) -> None:
        tick(screen)
        shown.append(str(screen.query_one("#node-state").render()))

    monkeypatch.setattr(ProvisionScreen, "tick", recording_tick)
    try:
        app = WizardApp(run_dir=tmp_path / "runs")
        async with app.run_test(size=SIZE) as pilot:
            await walk_to_review(pilot)
            await until(pilot, lambda: "KEPT" in status_bar_text(app), 60, "the kept node shown")
            await press(pilot, "#create")
            await on_screen(pilot, "SummaryScreen", 180)
            made = [line for line in shown if "exists for" in line]
            assert made and all(app.last_summary.name in line for line in made), shown
            assert not any(name in line for line in shown), shown
            verdict = str(app.screen.query_one("#verdict").render())
            assert "Nothing from this run is billing" in verdict and name in verdict, verdict
            summary = app.screen.query_one("#summary").plain
            assert "Nothing is billing" not in summary
            stays = f"Still running: {name} (v5litepod-1) in us-central1-a stays kept"  # practice
            assert stays in summary and "(practice: not billed; on Google" in summary
            assert (
                "$1.20/h" in summary
                and "It deletes itself after 30 minutes without a run" in summary
            )
            assert f"tpuwizard down --sandbox {name}" in summary
        assert any(key.endswith(f"/nodes/{name}") for key in sandbox_nodes(home))
    finally:
        down(tmp_path, name)
        stop_lasting_sandbox(home)
