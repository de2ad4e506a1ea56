"""Enter pressed from the first frame, while the leftover check still asks the clouds (each
request slowed to 200 ms), goes on every time: no key is lost to a blank screen between steps,
and the slice table takes its Enter."""

from __future__ import annotations

import asyncio

from tests.tui.pilot_helpers import until
from tpuwizard.tui.app import WizardApp


async def test_four_enters_from_the_first_frame_land_on_zones(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "latency_ms=200")
    app = WizardApp(run_dir=tmp_path / "runs", sandbox=True)
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(4):  # Route, Account, Capacity's slice table, then Zones shows
            await pilot.press("enter")
            await asyncio.sleep(0.2)
        await until(pilot, lambda: type(app.screen).__name__ == "ZonesScreen", 30, "Zones")
