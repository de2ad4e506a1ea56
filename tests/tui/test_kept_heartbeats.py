"""The open wizard keeps a kept node alive: its heartbeats move the watchdog's idle deadline,
and the status bar shows the node as KEPT with its cost and that deadline."""

from __future__ import annotations

import time

import pytest

from tests.integration.iterate_helpers import down, stop_lasting_sandbox, up
from tests.tui.pilot_helpers import on_screen, sandbox_nodes, until
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)
IDLE_S = 6.0


def heartbeat_mtime(home) -> float:
    files = list(home.glob("sandbox/workers/*/*/*/w0/.tpuwizard/heartbeat"))
    return max((f.stat().st_mtime for f in files), default=0.0)


def status_bar_text(app) -> str:
    bars = app.screen.query("#status-bar")
    return str(bars.first().render()) if bars else ""


@pytest.mark.rotating("kept-node-e2e")
async def test_a_kept_node_outlives_its_idle_time_while_the_wizard_is_open(tmp_path, home):
    kept = up(tmp_path, "--idle", str(IDLE_S / 60))  # the watchdog deletes it after 6 s idle
    name = kept["name"]
    try:
        kept_at = time.time()
        app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "RouteScreen")
            await until(pilot, lambda: "KEPT" in status_bar_text(app), 60, "the kept node shown")
            text = status_bar_text(app)
            assert f"KEPT {name} ~$" in text and "idle deadline in" in text, text
            # Well past the idle time: the heartbeats moved the file, and the node is still there.
            past = kept_at + 3 * IDLE_S
            await until(
                pilot,
                lambda: heartbeat_mtime(home) > past,
                60,
                "a heartbeat after three idle times",
            )
            alive = [key for key in sandbox_nodes(home) if key.endswith(f"/nodes/{name}")]
            assert alive, "the watchdog deleted a node the wizard kept alive"
            (node,) = app.billing.kept_nodes()
            left = node.seconds_to_idle_deadline()
            assert left is not None and 0 < left <= IDLE_S
        assert app.heartbeats is not None and app.heartbeats.stopped  # they end with the App
    finally:
        down(tmp_path, name)
        stop_lasting_sandbox(home)


@pytest.mark.rotating("kept-node-e2e")
async def test_a_node_kept_on_compute_engine_shows_googles_deadline_in_the_status_bar(
    tmp_path, home
):
    from tpuwizard.core.launch.records.ledger import Ledger

    kept = up(
        tmp_path,
        "--backend",
        "compute",
        "--zone",
        "us-east5-a",
        "--max-run",
        "30",
        accelerator="v6e-4",
    )
    name = kept["name"]
    try:
        # The deadline the launch read back from Compute Engine (terminationTimestamp).
        (record,) = [
            e for e in Ledger(home / "sandbox" / "ledger.jsonl").open_entries() if e.op == "kept"
        ]
        assert record.resource.backend == "compute" and record.extra["ended_by"] == "google"
        at = time.strftime("%H:%M", time.localtime(record.extra["deadline"]))
        app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "RouteScreen")
            await until(pilot, lambda: "KEPT" in status_bar_text(app), 60, "the kept node shown")
            text = status_bar_text(app)
            assert f"KEPT {name} ~$" in text and f"Google deletes it at {at}" in text, text
    finally:
        down(tmp_path, name)
        stop_lasting_sandbox(home)
