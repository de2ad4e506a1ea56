"""The wizard walked to a v6e-4 made through Compute Engine: Review's switch, Google's deadline
on screen, and a real sandbox launch that ends with nothing billing."""

import json
import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Switch

from tests.tui.pilot_helpers import (
    next_step,
    on_screen,
    press,
    record_screens,
    sandbox_nodes,
    screen_as,
    until,
    walk_to_capacity,
)
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.review import ReviewScreen
from tpuwizard.tui.widgets.hanging_lines import HangingLines

ACCELERATOR = "v6e-4"
GOOGLES_DEADLINE = re.compile(
    r"Google deletes it at \d\d:\d\d \(Compute Engine's max run duration\)"
)


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def on_screen_whole(app, selector: str) -> bool:
    """Drawn inside the terminal, below the status bar and above the key bar."""
    region = app.screen.query_one(selector).region
    return region.height > 0 and region.y >= 1 and region.bottom <= app.size.height - 1


def sandbox_instances(home: Path) -> dict:
    path = home / "sandbox" / "state.json"
    return json.loads(path.read_text()).get("instances", {}) if path.exists() else {}


async def walk_to_review_of_v6e(pilot) -> None:
    """Route and Account as they are; v6e-4 on Capacity; the first zone offering it."""
    app = pilot.app
    await walk_to_capacity(pilot)
    app.screen.query_one(DataTable).move_cursor(
        row=[f.name for f in app.screen.fits].index(ACCELERATOR)
    )
    await next_step(pilot)
    await on_screen(pilot, "ZonesScreen")
    await until(pilot, lambda: app.screen.zones, what="the zone survey")
    assert app.screen.zones, f"no zone offers {ACCELERATOR}"
    await next_step(pilot)
    await on_screen(pilot, "ReviewScreen")
    assert app.state.accelerator == ACCELERATOR


AUTO_BY_QUOTA = re.compile(r"Made through Compute Engine \(auto: its quota here covers 4 chips\)\.")


async def compute_by_auto(pilot) -> None:
    """Review opens on the backend the session chose: auto, and the practice project's Compute
    Engine quota covers the slice, as `launch --backend auto` would find (issue 46)."""
    app = pilot.app
    compute = app.screen.query_one("#compute", Switch)
    assert compute.value  # auto's choice: v6e is served by both, and the quota covers it
    await until(
        pilot,
        lambda: GOOGLES_DEADLINE.search(text_of(app, "#deadline-words")),
        30,
        "Google's deadline on Review",
    )
    words = text_of(app, "#deadline-words")
    assert AUTO_BY_QUOTA.search(words), words


@pytest.mark.parametrize("size", [(80, 24)])
async def test_review_of_a_v6e_on_compute_engine_fits_the_smallest_terminal(tmp_path, home, size):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=size) as pilot:
        await walk_to_review_of_v6e(pilot)
        await compute_by_auto(pilot)
        for selector in ("#compute", "#compute-label", "#deadline-words", "#create"):
            assert on_screen_whole(app, selector), selector
        assert "Compute Engine ON" in text_of(app, "#compute-label")


async def test_a_v6e_made_through_compute_engine_from_review_to_nothing_billing(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(100, 32)) as pilot:
        await walk_to_review_of_v6e(pilot)
        await compute_by_auto(pilot)
        # Switched off, the TPU API makes it, and its watchdog shows; on again, it is auto's.
        app.screen.query_one("#compute", Switch).toggle()  # what a click on it does
        await until(pilot, lambda: app.screen.query_one("#watchdog", Switch).display, 5, "TPU API")
        off = text_of(app, "#deadline-words")
        assert "Made through the TPU API (Compute Engine OFF); both APIs serve v6e." in off, off
        assert screen_as(app, ReviewScreen).answers().backend == "tpu-api"
        app.screen.query_one("#compute", Switch).toggle()
        await until(pilot, lambda: AUTO_BY_QUOTA.search(text_of(app, "#deadline-words")), 5, "auto")
        assert screen_as(app, ReviewScreen).answers().backend == "auto"
        words = text_of(app, "#deadline-words")
        # Which API, in the wizard's words: the switch, never the CLI's --backend.
        assert "--" not in words
        assert "Compute Engine ON" in text_of(app, "#compute-label")
        # No watchdog on Compute Engine: Google's max run duration is the deadline.
        assert not app.screen.query_one("#watchdog", Switch).display
        assert not app.screen.query_one("#watchdog-label").display
        assert "watchdog" not in words.lower()

        shown = record_screens(app)
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 120, "the end")
        await on_screen(pilot, "SummaryScreen")
        assert "VerifyScreen" in shown, shown
        assert app.state.finished_code == 0 and app.state.receipt_ok, app.state.last_failure
        receipt = app.state.receipt_path
        assert receipt is not None and Path(receipt).is_file()
        assert not app.billing.may_bill()
        assert "Nothing is billing" in text_of(app, "#verdict")
        assert "verified gone" in app.screen.query_one("#summary", HangingLines).plain

        ledger = Ledger(home / "sandbox" / "ledger.jsonl")
        records = ledger.entries()
        assert records and {e.resource.backend for e in records} == {"compute"}, records
        assert {e.resource.accelerator for e in records} == {ACCELERATOR}
        assert ledger.open_entries() == []
        assert sandbox_instances(home) == {} and sandbox_nodes(home) == {}
        await pilot.press("ctrl+q")  # nothing bills: quit at once
    assert app.return_code == 0


async def test_review_says_auto_kept_the_tpu_api_where_compute_engine_s_quota_is_short(
    tmp_path, home, monkeypatch
):
    # Compute Engine's on-demand v6e quota (the TPU family's) is 2 chips: auto keeps the TPU
    # API, and Review says so beside the switch, as asked (auto) and why (issue 46).
    monkeypatch.setenv(
        "TPUWIZARD_SANDBOX_FAULTS", "quota_limit=TPUS-PER-TPU-FAMILY-per-project-region:2"
    )
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(80, 24)) as pilot:
        await walk_to_review_of_v6e(pilot)
        assert not app.screen.query_one("#compute", Switch).value
        assert app.screen.query_one("#watchdog", Switch).display  # the TPU API's watchdog
        await until(pilot, lambda: "(auto:" in text_of(app, "#deadline-words"), 30, "auto")
        words = text_of(app, "#deadline-words")
        assert "Made through the TPU API (auto: Compute Engine has quota for 2 of 4 chips)." in (
            words
        )
        assert screen_as(app, ReviewScreen).answers().backend == "auto"
        for selector in ("#compute", "#deadline-words", "#create"):
            assert on_screen_whole(app, selector), selector
