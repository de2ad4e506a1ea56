"""The free route's "Run it on Kaggle for me", driven by Pilot end to end in practice: the
script pushed to the Kaggle stand-in by kaggle's own client, its state and log streamed on
their own screen, then the Summary with the receipt's verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.tui.pilot_helpers import next_step, on_screen, press, until, walk_to_review
from tests.waiting import wait_until_async
from tpuwizard.session.free.kaggle import PRACTICE_ENV
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
        await until(pilot, lambda: "No such file" in str(said.render()), 30, "the refusal")
        field.value = str(script)
        await press(pilot, "#kaggle-run")
        await on_screen(pilot, "KaggleRunScreen", 30)
        screen = app.screen
        log, state = screen.query_one("#kaggle-log"), screen.query_one("#kaggle-state")
        await until(pilot, lambda: "[practice] Pushing" in "\n".join(log.lines), 60, "the push")
        width = log.scrollable_content_region.width  # while its screen shows
        await on_screen(pilot, "SummaryScreen", 180)
        lines = "\n".join(log.lines)
        assert "Kaggle: RUNNING" in lines and "devices: 8 cpu" in lines  # as launch prints
        assert "Kaggle: COMPLETE" in str(state.render())
        summary = app.last_summary
        assert summary.finished.ok and summary.receipt.ok and summary.practice
        assert summary.name.startswith("practice-user/tpuwizard-")
        # Every log line folded to the log's width, none cut at its edge (the push's line is
        # longer than 100 columns): joined again, each says all it said.
        assert width > 20 and all(len(line) <= width for line in log.lines), width
        joined = " ".join(" ".join(log.lines).split())
        assert (
            "(Kaggle ends it then, even if this computer is off), receipt expected on cpu."
            in joined
        )
        shown = "\n".join(str(line) for line in app.screen.query_one("#summary").lines)
        assert "(proves the run)" in shown and "devices: 8 cpu" in shown
        # The Summary says what the run did, as its log did: the checks the receipt holds,
        # the script's exit, the kernel kept as the run's record.
        said = " ".join(shown.split())
        assert "Checks: 7 of 7 PASS" in said and "PASS contract" in said
        assert "Your script: exit 0." in said
        assert f"Kernel {summary.name}: kept as this run's record" in said
        for wrong in ("Checks: none ran", "did not finish", "Nothing was created"):
            assert wrong not in said
        assert Path(summary.receipt.path).is_file()
        run_dir = Path(summary.receipt.path).parent
        assert run_dir.parent == tmp_path / "runs" and (run_dir / "output.txt").is_file()
        outcome = json.loads((run_dir / "outcome.json").read_text())  # the screen's facts
        assert (outcome["route"], outcome["exit_code"], outcome["checks_passed"]) == (
            "kaggle",
            0,
            7,
        )
        await press(pilot, "#again")
        await on_screen(pilot, "RouteScreen", 30)
        # A TPU launch next: Review's optional script is its own, not the one run on Kaggle.
        app.screen.query_one(RouteCards).choose("vm")
        await walk_to_review(pilot)
        assert app.screen.query_one("#script", Input).value == ""
    import os

    assert "HTTP_PROXY" not in os.environ  # the wizard's Google sandbox is reached directly


async def test_quitting_while_the_kernel_is_queued_names_it_then_exits_at_once_leaving_its_record(
    tmp_path, monkeypatch, home
):
    import threading
    import time

    from tpuwizard.core.kaggle.ledger import KernelLedger
    from tpuwizard.sandbox import serving

    for name in PRACTICE_ENV:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("TPUWIZARD_KAGGLE_POLL", "0.1")
    monkeypatch.setenv("TPUWIZARD_KAGGLE_FAULTS", "queue=600")  # it stays QUEUED
    (tmp_path / "project").mkdir()
    script = tmp_path / "project" / "main.py"
    script.write_text("print(1)\n")
    app = WizardApp(sandbox=True, run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.screen.query_one(RouteCards).choose("notebook")
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")
        app.screen.query_one("#kaggle-script").value = str(script)
        await press(pilot, "#kaggle-run")
        await on_screen(pilot, "KaggleRunScreen", 30)
        log = app.screen.query_one("#kaggle-log")
        await until(pilot, lambda: "Kaggle: QUEUED" in "\n".join(log.lines), 60, "queued")
        await pilot.press("ctrl+q")
        # The guard names the kernel in the words `status` uses for it now.
        await on_screen(pilot, "KaggleQuitGuard", 30)
        from tpuwizard.session.free.kaggle_records import held_on_kaggle
        from tpuwizard.words.kaggle_text import held_lines

        held = held_on_kaggle()
        assert held is not None and len(held.seen) == 1
        said = str(app.screen.query_one("#kaggle-guard-text").render())
        assert said == "\n".join(held_lines(held.seen[0]))
        assert (
            said.startswith("[practice] practice-user/tpuwizard-")
            and "QUEUED in the practice" in said
        )
        await press(pilot, "#stay")  # Stay: back to following it
        await on_screen(pilot, "KaggleRunScreen", 30)
        await pilot.press("ctrl+q")
        await on_screen(pilot, "KaggleQuitGuard", 30)
        asked = time.monotonic()
        await press(pilot, "#leave")
        await until(pilot, lambda: not app.is_running, 30, "the wizard's exit")
    # Out of the app as a whole (its workers awaited) at once, not when Kaggle ends the kernel
    # (queued for 600 s here): a minute is slack for a loaded machine.
    assert time.monotonic() - asked < 60 and app.return_code == 0
    [record] = KernelLedger(home / "kaggle-ledger.jsonl").held()
    assert (
        record["op"] == "pushed"
        and record["practice"]
        and record["kernel"].startswith("practice-user/tpuwizard-")
    )
    # The run's thread ends once its stand-in does (as it would with the process).
    for server in serving.served_in_threads():
        server.shutdown()
        server.server_close()  # refused from now on
    running = lambda: any(t.name == "kaggle-run" for t in threading.enumerate())  # noqa: E731
    await wait_until_async(lambda: not running(), 30, "the Kaggle run's thread to end")
