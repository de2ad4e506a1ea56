"""A node kept on purpose earlier (`tpuwizard up`) stays kept whatever the wizard does: a stop
signal on its first screen ends the wizard and leaves the node, said in the parting line."""

from __future__ import annotations

import signal

from tests.integration.iterate_helpers import down, stop_lasting_sandbox, up
from tests.tui.pilot_helpers import on_screen, sandbox_nodes, until
from tests.tui.test_kept_heartbeats import status_bar_text
from tests.tui.test_quit_summary import finish_messages
from tpuwizard.tui.app import WizardApp

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
