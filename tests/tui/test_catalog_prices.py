"""The wizard prices from the practice sandbox's Billing Catalog (issue 33): Capacity shows the
offline table's figures, marked, while the read runs (it never waits for it), then the catalog's
with the date read; Zones redraws its rows when the read lands; Review names the source of its
zone's price; a refused read leaves the offline figures, saying why."""

from __future__ import annotations

import threading

from textual.widgets import Static

from tests.tui.pilot_helpers import next_step, on_screen, until, walk_to_capacity
from tpuwizard.core.prices.live import READING
from tpuwizard.session import prices
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)


def verdict(app) -> str:
    return str(app.screen.query_one("#verdict", Static).render())


def footnote(app) -> str:
    return str(app.screen.query_one("#prices", Static).render())


def review_line(app) -> str:
    return str(app.screen.query_one("#summary", Static).render())


async def test_offline_figures_stand_marked_until_the_read_lands(tmp_path, monkeypatch):
    gate = threading.Event()
    read = prices.price_book

    def held_read(session, refresh=False):
        assert gate.wait(60), "the test never let the read finish"
        return read(session, refresh)

    monkeypatch.setattr(prices, "price_book", held_read)
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_capacity(pilot)  # reached while the read is held: nothing waits on it
        reading = "until the Billing Catalog is read"
        await until(pilot, lambda: reading in verdict(app), 30, "the mark")
        assert "offline table (" in verdict(app)
        await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        assert READING in footnote(app)
        gate.set()  # the rows redraw with the catalog's figures, where it has them
        await until(pilot, lambda: READING not in footnote(app), what="the catalog's prices")
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        assert "/h in this zone, from the Cloud Billing Catalog, read " in review_line(app)
        await pilot.press("ctrl+q")


async def test_a_refused_read_leaves_the_offline_figures_saying_why(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "billing_unauthenticated=1")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_capacity(pilot)
        await until(pilot, lambda: "could not be read" in verdict(app), what="the failed read")
        assert "no credentials the Cloud Billing API accepts" in verdict(app)
        await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        line = review_line(app)
        assert "from the offline table (" in line and "could not be read" in line, line
        await pilot.press("ctrl+q")
