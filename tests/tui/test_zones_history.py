"""The Zones step puts the zones that lately had capacity first and says what each last found."""

from __future__ import annotations

import time

from textual.widgets import DataTable

from tests.tui.test_snapshots import Harness
from tpuwizard.core.cloud.zones import documented
from tpuwizard.core.launch.attempts import NO_CAPACITY, READY, Attempt
from tpuwizard.session.decision import ZoneAnswer


async def test_zones_are_ordered_by_recent_success_with_when_each_was_tried():
    from tpuwizard.tui.screens.zones import ZonesScreen

    now = time.time()
    tried = (
        Attempt("us-central1-a", "v5litepod-4", "vm", "tpu-api", NO_CAPACITY, now - 12 * 60),
        Attempt("us-east5-b", "v5litepod-4", "vm", "tpu-api", READY, now - 3 * 3600),
        Attempt("us-west1-c", "v6e-4", "vm", "tpu-api", READY, now),  # another type: no say
    )
    answer = ZoneAnswer(documented(), practice=False, attempts=tried)
    app = Harness(lambda: ZonesScreen("v5litepod-4", "us-central1-a", lambda: answer))
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(100):
            await pilot.pause(0.05)
            if app.screen.zones:
                break
        screen = app.screen
        assert screen.zones[0] == "us-east5-b" and screen.zones[-1] == "us-central1-a"
        table = screen.query_one(DataTable)
        rows = {table.get_row_at(i)[1]: table.get_row_at(i)[-1] for i in range(table.row_count)}
        assert rows["us-central1-a"] == "no capacity 12 min ago"
        assert rows["us-east5-b"] == "ready 3 h ago" and rows["us-west1-c"] == ""
