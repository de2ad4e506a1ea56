"""Zones as the chosen route sees them: the zones it can use first, each with its price there;
the rest marked unusable with the reason, and never chosen by Enter."""

from textual.widgets import DataTable, Static

from tests.tui.pilot_helpers import next_step, on_screen, until, walk_to_capacity
from tpuwizard.core.cloud.google_errors import flex_zones
from tpuwizard.core.plan import catalog
from tpuwizard.core.prices.quote import LIST_PRICE_SHOWN
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)


def rows(app) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)][1:] for i in range(table.row_count)]


async def to_zones(pilot, route_presses: int) -> None:
    await on_screen(pilot, "RouteScreen")
    for _ in range(route_presses):  # from on-demand: spot, then Flex-start
        await pilot.press("right")
    await walk_to_capacity(pilot)
    await next_step(pilot)
    await on_screen(pilot, "ZonesScreen")
    await until(pilot, lambda: pilot.app.screen.zones, what="the zone survey")


async def test_flex_start_lists_its_own_zones_first_and_marks_the_rest(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await to_zones(pilot, 2)
        assert app.state.route == "flex" and app.state.accelerator == "v5litepod-4"
        flex = flex_zones(catalog.parse_accelerator("v5litepod-4"))
        table = rows(app)
        usable = [r[0] for r in table if r[2] == "usable"]
        assert usable and set(usable) <= set(flex)
        assert [r[0] for r in table[: len(usable)]] == usable  # the route's zones first
        for _, _, use in table[len(usable) :]:
            assert use.startswith("no Flex-start here (only ")  # the reason, on its row
        # No Flex-start figure: the on-demand price there, as the most it costs.
        assert all(price.startswith("<=$") and price.endswith(" *") for _, price, _ in table)
        prices = " ".join(str(app.screen.query_one("#prices", Static).render()).split())
        assert "unknown" not in prices
        assert "Flex-start's own price is not published in the catalog" in prices
        assert "on-demand's price is shown as the most it costs" in prices
        cursor = app.screen.query_one(DataTable).cursor_row
        assert table[cursor][2] == "usable"  # the cursor starts on one it can use
        # Enter on a zone Flex-start cannot use does not take it, and says why.
        app.screen.query_one(DataTable).move_cursor(row=len(usable))
        await pilot.press("enter")
        assert type(app.screen).__name__ == "ZonesScreen"
        assert "cannot be used" in str(app.screen.query_one("#source", Static).render())
        app.screen.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await on_screen(pilot, "ReviewScreen")
        assert app.state.zone == usable[0]


async def test_spot_zones_show_each_zone_s_price_and_mark_list_prices(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await to_zones(pilot, 1)
        assert app.state.route == "spot"
        by_zone = {zone: (price, use) for zone, price, use in rows(app)}
        assert all(use == "usable" for _, use in by_zone.values())
        # us-central1-a has its own spot figure (0.298 x 4 chips); elsewhere the list price.
        assert by_zone["us-central1-a"][0] == "$1.19"
        assert by_zone["us-west4-a"][0] == "$0.98 *"
        prices = str(app.screen.query_one("#prices", Static).render())
        # After why the Billing Catalog's figure is not there (it has no SKU for the region,
        # or its read has not landed yet): the offline table's note.
        offline_note = "list price, may differ in this region."  # before the read lands
        assert offline_note in prices or f"{LIST_PRICE_SHOWN}." in prices


async def test_capacity_for_flex_start_labels_its_prices_as_the_on_demand_bound(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        for _ in range(2):  # from on-demand: spot, then Flex-start
            await pilot.press("right")
        await walk_to_capacity(pilot)
        table = app.screen.query_one(DataTable)
        prices = {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[-1]) for i in range(3)}
        # Not spot's figure, unlabelled: on-demand's, marked as the most it costs.
        assert prices["v5litepod-1"] == "<=$1.20", prices
        verdict = " ".join(str(app.screen.query_one("#verdict", Static).render()).split())
        assert "at most $" in verdict and "Google bills it at a discount" in verdict
