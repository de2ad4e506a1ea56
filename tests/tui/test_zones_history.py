"""The Zones step puts the zones that lately had capacity first and says what each last found."""

from __future__ import annotations

import time

from textual.widgets import DataTable

from tests.tui.pilot_helpers import until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.cloud.zones import documented
from tpuwizard.core.launch.records.attempts import NO_CAPACITY, READY, Attempt
from tpuwizard.core.plan import catalog
from tpuwizard.session.decision import ZoneAnswer


async def test_zones_are_ordered_by_recent_success_with_when_each_was_tried():
    from tpuwizard.tui.screens.zones import ZonesScreen

    now = time.time()
    tried = (
        Attempt("us-central1-a", "v5litepod-4", "vm", "tpu-api", NO_CAPACITY, now - 12 * 60),
        Attempt("us-west4-a", "v5litepod-4", "vm", "tpu-api", READY, now - 3 * 3600),
        Attempt("us-west1-c", "v6e-4", "vm", "tpu-api", READY, now),  # another type: no say
    )
    answer = ZoneAnswer(documented(), practice=False, attempts=tried)
    app = Harness(
        lambda: ZonesScreen(
            catalog.parse_accelerator("v5litepod-4"), "us-central1-a", lambda: answer
        )
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: getattr(app.screen, "zones", None), 30, "the zones' rows")
        screen = app.screen
        # Among the equally priced confirmed zones: the one that lately had capacity first, the
        # one that lately had none last; the catalog's unconfirmed zones after them all.
        confirmed = [z for z, r in zip(screen.zones, screen.rows, strict=True) if not r.unconfirmed]
        assert confirmed[0] == "us-west4-a" and confirmed[-1] == "us-central1-a"
        assert all(r.unconfirmed for r in screen.rows[len(confirmed) :])
        table = screen.query_one(DataTable)
        rows = {table.get_row_at(i)[1]: table.get_row_at(i)[-1] for i in range(table.row_count)}
        assert rows["us-central1-a"] == "no capacity 12 min ago"
        assert rows["us-west4-a"] == "ready 3 h ago" and rows["us-west1-c"] == ""


async def test_the_cheapest_confirmed_zone_is_chosen_first_and_unconfirmed_ones_come_last():
    """v5e: europe-west4-b costs more and is unconfirmed; with no zone chosen before, the
    highlighted zone is a confirmed one at the lowest price, and Enter takes it."""
    from tpuwizard.tui.screens.zones import ZonesScreen

    answer = ZoneAnswer(documented(), practice=True, attempts=())
    chosen: list[str] = []
    app = Harness(
        lambda: ZonesScreen(catalog.parse_accelerator("v5litepod-4"), None, lambda: answer)
    )
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: getattr(app.screen, "zones", None), 30, "the zones' rows")
        screen = app.screen
        screen.dismiss = chosen.append  # the wizard's next step receives the zone
        assert screen.zones[-1] == "europe-west4-b"
        table = screen.query_one(DataTable)
        assert table.get_row_at(table.row_count - 1)[1] == "europe-west4-b (unconfirmed)"
        first = screen.rows[table.cursor_row]
        cheapest = min(r.price.hourly for r in screen.rows)
        assert not first.unconfirmed and first.price.hourly == cheapest
        await pilot.press("enter")
        assert chosen == [first.zone]
