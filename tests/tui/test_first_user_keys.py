"""Keys a first-time user presses on the early steps, at the stated minimum (80x24)."""

from textual.widgets import DataTable, Input, Static

from tests.tui.pilot_helpers import next_step, on_screen, until, walk_to_capacity
from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import Route
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.choice import Choice
from tpuwizard.tui.widgets.route_cards import CHOSEN, RECOMMENDED, RouteCards

SIZE = (80, 24)


def cards(app) -> RouteCards:
    return app.screen.query_one(RouteCards)


def marks(app) -> dict[str, tuple[str, str]]:
    """Each card's words on its border: (chosen, recommended)."""
    return {info.key: cards(app).words(info.key) for info in cards(app).routes}


def drawn(app) -> str:
    return str(cards(app).render())


async def test_the_cards_are_the_route_choice_by_keys_and_enter_keeps_it(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        assert app.focused is cards(app)  # the choice first
        # The recommendation for the default answers is picked, and both are said in words.
        assert marks(app)["vm"] == (CHOSEN, RECOMMENDED)
        assert [k for k, (c, _) in marks(app).items() if c] == ["vm"]
        assert drawn(app).count(CHOSEN) == 1 and drawn(app).count(RECOMMENDED) == 1
        await pilot.press("left")
        assert marks(app)["notebook"] == (CHOSEN, "") and marks(app)["vm"] == ("", RECOMMENDED)
        await pilot.press("right", "right")
        assert marks(app)["spot"] == (CHOSEN, "") and marks(app)["notebook"] == ("", "")
        await pilot.press("enter")
        await on_screen(pilot, "AccountScreen")
        assert app.state.route == "spot"
        await pilot.press("escape")  # coming back keeps the pick, not the recommendation
        await on_screen(pilot, "RouteScreen")
        assert marks(app)["spot"] == (CHOSEN, "") and marks(app)["vm"] == ("", RECOMMENDED)


async def test_a_click_on_a_card_picks_its_route(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        start, width = cards(app).columns(cards(app).size.width)[3]  # the fourth card: flex
        assert await pilot.click(RouteCards, offset=(start + width // 2, 2))
        assert cards(app).chosen == "flex" and marks(app)["flex"][0] == CHOSEN
        await pilot.press("enter")
        await on_screen(pilot, "AccountScreen")
        assert app.state.route == "flex"


async def test_a_new_recommendation_moves_the_pick(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("right")  # the user's own pick: spot
        for _ in range(4):  # the cards, then the four questions
            await pilot.press("tab")
        assert app.focused is app.screen.query_one("#billing", Choice)
        await pilot.press("shift+tab", "right")  # runs 4-24 hours: on demand still
        assert cards(app).recommended == "vm"
        assert cards(app).chosen == "spot"  # the same recommendation keeps the user's pick
        await pilot.press("tab", "right")  # billing: no, so the free notebook
        await until(pilot, lambda: cards(app).chosen == "notebook", 30, "the notebook picked")
        assert marks(app)["notebook"] == (CHOSEN, RECOMMENDED) and marks(app)["vm"] == ("", "")
        await pilot.press("enter")
        await on_screen(pilot, "NotebookScreen")


async def test_enter_on_a_question_goes_on_and_never_changes_the_answer(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("tab", "tab")
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
            for selector in ("#routes", "#ask", "#questions", "#advice"):
                region = app.screen.query_one(selector).region
                assert region.height > 0 and region.y >= 1
                assert region.bottom <= app.size.height - 1, (budget, selector)


async def test_enter_in_the_size_field_applies_it_and_goes_to_the_table(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_capacity(pilot)
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
        await walk_to_capacity(pilot)
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
        await until(pilot, lambda: marked(table) == at_cursor(table) != ["v5litepod-4"], 30, "mark")
        await pilot.press("up", "enter")
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        zones = app.screen.query_one(DataTable)
        first = at_cursor(zones)
        assert marked(zones) == first
        await pilot.press("down")
        await until(pilot, lambda: marked(zones) == at_cursor(zones) != first, 30, "the mark")


async def test_the_cards_keep_less_below_100_columns_and_all_again_above(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(120, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        assert "wait:" in drawn(app) and app.screen.query_one("#route-title").display
        await pilot.resize_terminal(*SIZE)
        await until(pilot, lambda: "wait:" not in drawn(app), 30, "the compact cards")
        assert not app.screen.query_one("#route-title").display
        assert all(len(line) <= SIZE[0] for line in drawn(app).splitlines())
        await pilot.resize_terminal(120, 32)
        await until(pilot, lambda: "wait:" in drawn(app), 30, "the full cards")


async def test_tab_on_the_first_steps_visits_only_what_can_be_seen(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        for step in ("RouteScreen", "AccountScreen"):
            await on_screen(pilot, step)
            visited = []
            for _ in range(len(app.screen.focus_chain) + 1):
                await pilot.press("tab")
                visited.append(app.focused)
            assert app.screen.query_one("#body") not in visited, step  # nothing to scroll
            assert all(w is not None and w.region.height > 0 for w in visited), step
            await next_step(pilot)


async def test_the_notebook_platform_chosen_is_said_in_words(tmp_path):
    from textual.widgets import RadioButton

    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        cards(app).choose("notebook")
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")

        def chosen() -> list[str]:
            return [
                str(b.name) for b in app.screen.query(RadioButton) if "(chosen)" in str(b.label)
            ]

        assert chosen() == ["colab"]
        await pilot.press("down", "space")  # the list has focus: Kaggle
        await until(pilot, lambda: chosen() == ["kaggle"], 30, "Kaggle chosen in words")


async def test_help_offers_esc_to_go_back_only_where_a_step_can(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        for step, goes_back in (("RouteScreen", False), ("AccountScreen", True)):
            await on_screen(pilot, step)
            await pilot.press("f1")
            await on_screen(pilot, "HelpScreen", 30)
            words = str(app.screen.query_one("#help-text", Static).render())
            assert ("go back one step" in words) is goes_back, step
            await pilot.press("escape")
            await on_screen(pilot, step, 30)
            await next_step(pilot)


async def test_the_capacity_prices_are_those_of_the_route_chosen(tmp_path):
    from tpuwizard.core.plan import cost

    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        cards(app).choose("spot")
        await walk_to_capacity(pilot)
        table = app.screen.query_one(DataTable)

        def shown() -> str:
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            return next(str(row[-1]) for row in rows if str(row[1]) == "v5litepod-4")

        def spot() -> str:  # from the prices the session reads (the catalog, once it lands)
            return f"${cost.hourly(catalog.parse_accelerator('v5litepod-4'), 'spot'):,.2f}"

        await until(pilot, lambda: shown() == spot(), 30, "spot's price on Capacity")
        assert cost.hourly(catalog.parse_accelerator("v5litepod-4"), "spot") != cost.hourly(
            catalog.parse_accelerator("v5litepod-4"), "vm"
        )


async def test_review_says_why_flex_start_has_only_a_bound_never_unknown(tmp_path):
    from tests.tui.test_snapshots import Harness
    from tpuwizard.tui.screens.review import ReviewScreen
    from tpuwizard.tui.state import WizardState

    for route, said in (("flex", "At most $4.80/h in this zone"), ("vm", "/h in this zone")):
        state = WizardState(
            practice=True,
            project="p",
            zone="us-central1-a",
            accelerator="v5litepod-4",
            route=Route(route),
        )
        app = Harness(lambda state=state: ReviewScreen(state), state)
        async with app.run_test(size=SIZE) as pilot:
            await on_screen(pilot, "ReviewScreen", 30)
            words = str(app.screen.query_one("#summary", Static).render())
            assert said in words and "unknown" not in words, route
