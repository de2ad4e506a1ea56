"""The open wizard keeps a kept node alive: its heartbeats move the watchdog's idle deadline,
and the status bar shows the node as KEPT with its cost and how it ends (its end sentence)."""

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
            # its end sentence's facts, never a countdown the heartbeats keep moving
            assert f"KEPT {name} ~$" in text and "ends after 0.1m idle, by " in text, text
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


@pytest.mark.rotating("kept-node-e2e")
async def test_a_kept_node_deleted_elsewhere_leaves_the_bar_the_guard_and_the_parting_words(
    tmp_path, home, monkeypatch
):
    """Issue 52, item 1 (newcomer round 6, finding 2): the wizard open, `tpuwizard down` in
    another process deletes its kept node; within one heartbeat the bar shows nothing, Ctrl+Q
    quits without a guard, and no parting word names the node."""
    from tests.integration.iterate_helpers import up as keep_one
    from tests.tui.test_quit_summary import finish_messages

    name = keep_one(tmp_path, "--idle", "30")["name"]
    beat_s = 1.0
    try:
        app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
        app.kept_beat_s = beat_s
        said = finish_messages(app, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "RouteScreen")
            await until(pilot, lambda: "KEPT" in status_bar_text(app), 60, "the kept node shown")
            assert name in status_bar_text(app)
            down(tmp_path, name)  # another process: verified gone there
            rounds = app.heartbeats.rounds
            # One round started after the delete, and the bar read after it: nothing kept.
            await until(pilot, lambda: app.heartbeats.rounds >= rounds + 2, 30, "a heartbeat")
            await pilot.pause()
            assert "KEPT" not in status_bar_text(app) and name not in status_bar_text(app)
            assert app.billing.existing() == []
            await pilot.press("ctrl+q")
            await until(pilot, lambda: not app.is_running, 30, "the exit without a guard")
        assert app.return_code == 0
        (message,) = said
        assert message is None or name not in message, message
    finally:
        stop_lasting_sandbox(home)


@pytest.mark.rotating("kept-node-e2e")
async def test_a_kept_node_past_its_max_run_deadline_leaves_every_view_and_closes_its_folder(
    tmp_path, home, monkeypatch
):
    """Issue 52's second pilot: the heartbeats keep a short idle limit from firing, so the
    watchdog deletes the node at its --max-run deadline; within one heartbeat after that the
    bar shows nothing, Ctrl+Q quits without a guard, no parting word names it, and its run
    folder is closed with that deadline as the reason."""
    import json
    from pathlib import Path

    from tests.tui.test_quit_summary import finish_messages
    from tpuwizard.core.launch.kept.end_reason import EndReason, GoneEvidence
    from tpuwizard.words.teardown_text import end_reason_words

    idle_s = 12.0  # far below the deadline: only the wizard's heartbeats keep it alive
    kept = up(tmp_path, "--idle", str(idle_s / 60), "--max-run", "1")
    name, deadline = kept["name"], kept["deadline"]
    run_folder = Path(kept["receipt"]).parent
    try:
        app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
        app.kept_beat_s = 1.0
        said = finish_messages(app, monkeypatch)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "RouteScreen")
            await until(pilot, lambda: name in status_bar_text(app), 60, "the kept node shown")

            def listed() -> bool:
                return any(key.endswith(f"/nodes/{name}") for key in sandbox_nodes(home))

            await until(pilot, lambda: not listed(), deadline - time.time() + 60, "its deadline")
            gone_at = time.time()
            assert gone_at >= deadline, "deleted before its deadline: its idle limit fired"
            rounds = app.heartbeats.rounds
            await until(pilot, lambda: app.heartbeats.rounds >= rounds + 2, 30, "a heartbeat")
            await pilot.pause()
            assert "KEPT" not in status_bar_text(app) and name not in status_bar_text(app)
            assert app.billing.existing() == []
            await pilot.press("ctrl+q")
            await until(pilot, lambda: not app.is_running, 30, "the exit without a guard")
        assert app.return_code == 0
        (message,) = said
        assert message is None or name not in message, message
        outcome = json.loads((run_folder / "outcome.json").read_text())
        assert outcome["still_existing"] == [] and name in outcome["verified_gone"], outcome
        closed = outcome["kept_gone"][name]
        assert (closed["reason"], closed["seen_by"]) == ("max_run", "heartbeat"), closed
        assert deadline <= closed["seen_gone_at"] <= time.time(), closed
        assert closed["limit_passed_at"] == deadline, closed
        evidence = GoneEvidence(  # what the folder alone holds of it
            kept_at=closed["last_seen_present_at"],
            idle_s=None,
            max_deadline=closed["limit_passed_at"],
            last_heartbeat=None,
            seen_gone_at=closed["seen_gone_at"],
        )
        at = time.strftime("%H:%M", time.localtime(deadline))
        words = end_reason_words(EndReason(closed["reason"]), evidence)
        assert words.startswith(f"its --max-run deadline at {at} passed"), words
        assert json.loads((run_folder / "cost.json").read_text())["still_running"] is False
    finally:
        stop_lasting_sandbox(home)
