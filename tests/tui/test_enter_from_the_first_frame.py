"""Enter pressed from the first frame, while the leftover check still asks the clouds (each
request slowed to 200 ms), goes on every time: no key is lost to a blank screen between steps,
and the slice table takes its Enter."""

from __future__ import annotations

import asyncio
import threading

from tests.tui.pilot_helpers import on_screen, until
from tests.tui.test_snapshots import Harness
from tpuwizard.core.cloud.zones import documented
from tpuwizard.core.plan import catalog
from tpuwizard.session.decision import ZoneAnswer
from tpuwizard.tui.app import WizardApp


async def test_four_enters_from_the_first_frame_land_on_zones(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "latency_ms=200")
    app = WizardApp(run_dir=tmp_path / "runs", sandbox=True)
    async with app.run_test(size=(100, 32)) as pilot:
        for _ in range(4):  # Route, Account, Capacity's size field, then its slice table
            await pilot.press("enter")
            await asyncio.sleep(0.2)
        await until(pilot, lambda: type(app.screen).__name__ == "ZonesScreen", 30, "Zones")
        assert app.state.accelerator == "v5litepod-4"  # the table's Enter took its slice


class HeldFirstStep(WizardApp):
    """The first step held back until the test lets it show: keys typed meanwhile meet only
    the screen beneath the steps."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.first_step = asyncio.Event()

    async def step_route(self):
        await self.first_step.wait()
        return await super().step_route()


async def test_keys_typed_before_a_step_shows_go_to_it_in_order(tmp_path):
    app = HeldFirstStep(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.press("right", "enter")  # the spot card, then on
        assert len(app.screen_stack) == 1  # no step was on screen to take them
        app.first_step.set()
        await on_screen(pilot, "AccountScreen", 30)
        assert app.state.route == "spot"


async def test_an_enter_on_zones_before_its_rows_takes_the_first_usable_zone():
    """The survey still out (the cloud opening beside the walk): Enter on the empty table is
    kept, and takes the highlighted zone once the rows come (an empty table posts nothing)."""
    from tpuwizard.tui.screens.zones import ZonesScreen

    released = threading.Event()

    def survey() -> ZoneAnswer:
        released.wait(30)
        return ZoneAnswer(documented(), practice=True, attempts=())

    chosen: list[str] = []
    app = Harness(lambda: ZonesScreen(catalog.parse_accelerator("v5litepod-4"), None, survey))
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ZonesScreen), 30, "Zones")
        app.screen.dismiss = chosen.append  # the wizard's next step receives the zone
        await pilot.press("enter")
        assert not app.screen.rows and not chosen
        released.set()
        await until(pilot, lambda: chosen, 30, "the zone taken")
        assert chosen == [app.screen.zones[0]]


async def test_two_enters_on_capacity_before_the_first_is_handled_take_the_slice():
    """A busy wizard (the leftover check importing Compute Engine's library beside it) handles
    keys late: the second Enter reaches the size field before the first has moved the focus
    to the table. It takes the highlighted slice all the same."""
    from textual import events

    from tpuwizard.tui.screens.capacity import CapacityScreen

    chosen: list = []
    app = Harness(lambda: CapacityScreen(48, None))
    async with app.run_test(size=(100, 32)) as pilot:
        await until(pilot, lambda: app.focused is app.screen.query_one("#size"), 30, "the field")
        app.screen.dismiss = chosen.append  # the wizard's next step receives the answer
        for _ in range(2):  # both posted before either is handled, as a busy driver hands them
            app.post_message(events.Key("enter", "\r"))
        await until(pilot, lambda: chosen, 30, "the slice taken")
        assert chosen[0].accelerator == "v5litepod-4"  # the cheapest that holds 48 GiB
