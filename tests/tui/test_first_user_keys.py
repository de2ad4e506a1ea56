"""Keys a first-time user presses on the early steps, at the stated minimum (80x24)."""

from textual.widgets import DataTable, Input, RadioButton, RadioSet, Static

from tests.tui.pilot_helpers import on_screen, press, until
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.choice import Choice

SIZE = (80, 24)


def labels(app) -> dict[str, str]:
    return {str(b.name): str(b.label) for b in app.screen.query(RadioButton)}


def on_buttons(app) -> list[str]:
    return [str(b.name) for b in app.screen.query(RadioButton) if b.value]


async def test_the_route_list_starts_on_the_chosen_route_and_enter_keeps_it(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        routes = app.screen.query_one(RadioSet)
        for _ in range(4):  # the four questions, then the list
            await pilot.press("tab")
        assert app.focused is routes
        highlighted = routes.query_one("RadioButton.-selected", RadioButton)
        assert highlighted.name == "vm"  # where the cursor lands is what is chosen
        await pilot.press("enter")
        assert on_buttons(app) == ["vm"]
        assert labels(app)["vm"].endswith("(chosen, recommended)")
        await pilot.press("up")  # the free notebook, highlighted, then Space picks it
        await pilot.press("space")
        assert on_buttons(app) == ["notebook"]
        assert labels(app)["notebook"].endswith("(chosen)")
        assert labels(app)["vm"].endswith("(recommended)")  # no longer "chosen"
        await pilot.press("down", "enter")  # and back, with Enter this time
        assert on_buttons(app) == ["vm"] and "chosen" in labels(app)["vm"]
        await pilot.press("tab", "enter")  # Next
        await on_screen(pilot, "AccountScreen")
        assert app.state.route == "vm"


async def test_a_new_recommendation_moves_the_pick_and_the_lists_cursor(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        for _ in range(3):
            await pilot.press("tab")
        await pilot.press("right")  # billing: no, so the free notebook is recommended
        await until(pilot, lambda: on_buttons(app) == ["notebook"], 5, "the notebook picked")
        assert labels(app)["notebook"].endswith("(chosen, recommended)")
        assert not labels(app)["vm"].endswith(")")
        await pilot.press("tab")  # into the list: Enter keeps the new pick
        routes = app.screen.query_one(RadioSet)
        assert routes.query_one("RadioButton.-selected", RadioButton).name == "notebook"
        await pilot.press("enter")
        assert on_buttons(app) == ["notebook"]


async def test_enter_on_a_question_goes_on_and_never_changes_the_answer(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("tab")
        chips = app.screen.query_one("#chips", Choice)
        assert app.focused is chips and chips.value == 4
        await pilot.press("enter")
        await on_screen(pilot, "AccountScreen")
        await pilot.press("escape")
        await on_screen(pilot, "RouteScreen")
        values = {c.id: c.value for c in app.screen.query(Choice)}
        assert values == {"budget": "normal", "chips": 4, "length": "1-4 hours", "billing": True}


async def test_the_route_step_keeps_a_short_hint_at_80x24(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        ask = app.screen.query_one("#ask", Static)
        assert ask.display and "← →" in str(ask.render())
        for budget, chips in (("normal", 4), ("free", 16)):  # the second: the longest advice
            app.screen.query_one("#budget", Choice).value = budget
            app.screen.query_one("#chips", Choice).value = chips
            await pilot.pause()
            assert app.screen.query_one("#advice").region.height == (2 if chips == 4 else 3)
            for selector in ("#ask", "#next", "#route"):
                region = app.screen.query_one(selector).region
                assert region.height > 0 and region.y >= 1
                assert region.bottom <= app.size.height - 1, (budget, selector)


async def test_enter_in_the_size_field_applies_it_and_goes_to_the_table(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        for step in ("RouteScreen", "AccountScreen"):
            await on_screen(pilot, step)
            await press(pilot, "#next")
        await on_screen(pilot, "CapacityScreen")
        size = app.screen.query_one("#size", Input)
        assert app.focused is size
        size.value = ""
        await pilot.press(*"100", "enter")
        table = app.screen.query_one(DataTable)
        assert app.focused is table
        assert table.get_row_at(table.cursor_row)[1] == "v5litepod-8"  # fits 100 GiB
        await pilot.press("enter")  # the table takes the highlighted slice
        await on_screen(pilot, "ZonesScreen")
        assert app.state.accelerator == "v5litepod-8"


async def test_the_fit_tables_headers_differ_and_the_chosen_row_is_marked_in_words(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        for step in ("RouteScreen", "AccountScreen"):
            await on_screen(pilot, step)
            await press(pilot, "#next")
        await on_screen(pilot, "CapacityScreen")
        table = app.screen.query_one(DataTable)
        headers = [str(c.label) for c in table.columns.values()]
        assert "tot" not in headers and len(set(headers)) == len(headers)
        assert table.virtual_size.width <= table.size.width  # still fits 80 columns

        def marked(t: DataTable) -> list[str]:
            return [str(t.get_row_at(i)[1]) for i in range(t.row_count) if t.get_row_at(i)[0]]

        def at_cursor(t: DataTable) -> list[str]:
            return [str(t.get_row_at(t.cursor_row)[1])]

        assert marked(table) == ["v5litepod-4"] == at_cursor(table)
        table.focus()
        await pilot.press("down")
        await until(pilot, lambda: marked(table) == at_cursor(table) != ["v5litepod-4"], 5, "mark")
        await pilot.press("up", "enter")
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        zones = app.screen.query_one(DataTable)
        first = at_cursor(zones)
        assert marked(zones) == first
        await pilot.press("down")
        await until(pilot, lambda: marked(zones) == at_cursor(zones) != first, 5, "the mark")
