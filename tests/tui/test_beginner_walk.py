"""What a first-time user trips over, walked at the stated minimum (80x24) and at 100x32."""

import pytest
from textual.color import Color
from textual.widgets import Button, DataTable, Input, Select, Switch

from tests.tui.pilot_helpers import next_step, on_screen, press, until, walk_to_capacity
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.choice import Choice
from tpuwizard.tui.widgets.route_cards import CHOSEN, RECOMMENDED, RouteCards

SIZES = [(80, 24), (100, 32)]


def text_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def on_screen_whole(app, selector: str) -> bool:
    """The widget is drawn inside the terminal, above the footer: no scrolling needed."""
    region = app.screen.query_one(selector).region
    return region.height > 0 and region.y >= 1 and region.bottom <= app.size.height - 1


@pytest.mark.parametrize("size", SIZES)
async def test_route_questions_are_labelled_and_preselect_their_recommendation(tmp_path, size):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "RouteScreen")
        screen = app.screen
        assert app.focused is screen.query_one(RouteCards)  # Enter works without Tab first
        titles = [s.border_title for s in screen.query(Choice)]
        assert titles == ["Budget", "Chips needed", "Run length", "Billing acct"]
        assert on_screen_whole(app, "#routes") and on_screen_whole(app, "#questions")
        assert screen.query_one(RouteCards).chosen == "vm"
        # Keyboard only, as a first-time user would: Tab to the billing question, then an arrow.
        for _ in range(4):
            await pilot.press("tab")
        assert app.focused is screen.query_one("#billing")
        await pilot.press("right")
        await until(pilot, lambda: screen.query_one(RouteCards).chosen == "notebook")
        assert "Without a billing account" in text_of(app, "#advice")
        assert screen.query_one(RouteCards).words("notebook") == (CHOSEN, RECOMMENDED)
        await pilot.press("left")  # back to "yes"
        for _ in range(2):  # a click on the left arrow goes back: normal -> low -> free
            await pilot.click("#budget", offset=(2, 1))
        assert screen.query_one("#budget", Choice).value == "free"
        assert screen.query_one("#billing", Choice).value is True
        await until(pilot, lambda: "budget of nothing" in text_of(app, "#advice"))
        assert "billing account" not in text_of(app, "#advice")
        assert screen.query_one(RouteCards).chosen == "notebook"
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")  # Next follows the recommendation


@pytest.mark.parametrize("size", SIZES)
async def test_7b_becomes_parameters_the_cheapest_fitting_slice_is_chosen_and_review_says_so(
    tmp_path, size
):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=size) as pilot:
        await walk_to_capacity(pilot)
        screen = app.screen
        assert app.focused is screen.query_one("#size")
        table = screen.query_one(DataTable)
        assert on_screen_whole(app, "#next")
        # The $/h column is on screen, not cut, at 80 columns too.
        assert table.virtual_size.width <= table.size.width
        assert table.get_row_at(table.cursor_row)[1] == "v5litepod-4"  # cheapest fitting 48 GiB
        screen.query_one("#size", Input).value = "7B"
        await until(pilot, lambda: screen.query_one("#as-params").display, what="the offer")
        assert "looks like a parameter count" in text_of(app, "#verdict")
        await press(pilot, "#as-params")
        assert screen.query_one("#params", Input).value == "7B"
        screen.query_one("#recipe", Select).value = "adam-fp32"
        await until(pilot, lambda: "104.3 GiB" in text_of(app, "#verdict"), what="the fit")
        assert table.get_row_at(table.cursor_row)[1] == "v5litepod-8"
        # A slice too small needs a second yes, which says by how much.
        table.move_cursor(row=[f.name for f in screen.fits].index("v5litepod-4"))
        await next_step(pilot)
        await on_screen(pilot, "ConfirmScreen")
        assert "GiB per chip short" in text_of(app, "#question")
        await press(pilot, "#no")
        await on_screen(pilot, "CapacityScreen")
        table.move_cursor(row=[f.name for f in screen.fits].index("v5litepod-8"))
        await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await pilot.press("escape")  # back: the answers are kept
        await on_screen(pilot, "CapacityScreen")
        assert app.screen.query_one("#params", Input).value == "7B"
        assert str(app.screen.query_one("#recipe", Select).value) == "adam-fp32"
        await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        assert "104.3 GiB fits sharded on v5litepod-8" in text_of(app, "#fit-verdict")
        assert on_screen_whole(app, "#create")
        # Practice: the check before create says yes, so the watchdog is armed by default.
        assert app.screen.query_one("#watchdog", Switch).value
        assert "even if this laptop sleeps" in text_of(app, "#deadline-words")
        app.screen.query_one("#watchdog", Switch).value = False
        await until(
            pilot,
            lambda: "only while tpuwizard runs" in text_of(app, "#deadline-words"),
            what="the words without the watchdog",
        )


@pytest.mark.parametrize("size", SIZES)
async def test_a_slow_create_ticks_and_the_quit_guard_counts(
    tmp_path, home, monkeypatch, capsys, size
):
    from tests.tui.pilot_helpers import walk_to_review

    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "30")  # a slow create
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=size) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await on_screen(pilot, "ProvisionScreen", 30)
        await until(pilot, lambda: "exists for" in text_of(app, "#node-state"), 30, "the state")
        first = text_of(app, "#node-state")
        await until(pilot, lambda: text_of(app, "#node-state") != first, 30, "a tick")
        assert "CREATING" in text_of(app, "#node-state")
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        shown = text_of(app, "#guard-text")
        assert "exists" in shown and "not running yet" in shown  # practice: nothing bills
        await until(pilot, lambda: text_of(app, "#guard-text") != shown, 30, "the guard's tick")
        await press(pilot, "#delete")
        await until(pilot, lambda: not app.is_running, 60, "the exit")
    assert app.return_code == 0
    # "Delete now" ends with the run's summary printed, as plain mode and the CLI do.
    farewell = capsys.readouterr().err
    assert "Summary of tpuwizard-" in farewell and "Nothing is billing." in farewell


async def test_the_light_themes_card_borders_are_visible(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        for theme in ("textual-light", "textual-dark"):
            app.theme = theme
            await pilot.pause()  # until the new theme's styles are applied (the app is idle)
            cards = app.screen.query_one(RouteCards)
            assert cards.words("notebook") == ("", "")  # a plain card: the muted border
            _, background = cards.background_colors
            muted = Color.parse(app.get_css_variables()["foreground-muted"])
            border = background + muted  # the border over its background
            assert abs(border.brightness - background.brightness) > 0.25, theme


@pytest.mark.parametrize("size", SIZES)
async def test_enter_alone_walks_every_step_with_the_defaults(tmp_path, size):
    """Focus starts on each step's first field, so Enter works without Tab."""
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, "RouteScreen")
        assert app.focused is app.screen.query_one(RouteCards)
        await pilot.press("enter")  # on the cards Enter goes on, with the recommended pick
        await on_screen(pilot, "AccountScreen")
        # Where Enter goes on, as on the step before: not on the switch, which it would flip.
        assert app.focused is app.screen.query_one("#next")
        assert "Practice mode: ON" in text_of(app, "#practice-label")
        await pilot.press("enter")
        await on_screen(pilot, "CapacityScreen")
        assert app.state.practice  # Enter went on in practice mode, as the switch said
        assert app.focused is app.screen.query_one("#size")
        app.screen.query_one(DataTable).focus()
        await pilot.press("enter")  # Enter on the table takes the preselected slice
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="the zone survey")
        assert isinstance(app.focused, DataTable)
        assert "from the practice sandbox" in text_of(app, "#source")
        await pilot.press("enter")
        await on_screen(pilot, "ReviewScreen")
        assert app.focused is app.screen.query_one("#name")
        assert app.state.accelerator == "v5litepod-4"


@pytest.mark.parametrize("size", SIZES)
async def test_review_says_plainly_why_the_watchdog_is_off_where_it_cannot_run(
    tmp_path, home, monkeypatch, size
):
    from tests.tui.pilot_helpers import walk_to_review

    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "sa_no_delete=1")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=size) as pilot:
        await walk_to_review(pilot)
        assert not app.screen.query_one("#watchdog", Switch).value  # the check said no
        words = text_of(app, "#deadline-words")
        assert "only while tpuwizard runs, because its service account may not" in words
        assert "F1 shows the command that allows the watchdog" in words
        assert not app.screen.query_one("#create", Button).disabled  # it goes on without it
        assert on_screen_whole(app, "#create") and on_screen_whole(app, "#deadline-words")
        await pilot.press("f1")
        await on_screen(pilot, "HelpScreen")
        assert "gcloud projects add-iam-policy-binding" in str(
            app.screen.query_one("#help-text").render()
        )


async def test_switching_the_watchdog_on_without_act_as_disables_create_with_the_reason(
    tmp_path, home, monkeypatch
):
    from tests.tui.pilot_helpers import sandbox_nodes, walk_to_review

    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "no_act_as=1")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=(80, 24)) as pilot:
        await walk_to_review(pilot)
        assert not app.screen.query_one("#watchdog", Switch).value  # the check said no
        assert "because you may not attach its service account" in text_of(app, "#deadline-words")
        assert not app.screen.query_one("#create", Button).disabled  # off, it goes on

        app.screen.query_one("#watchdog", Switch).value = True
        await until(
            pilot, lambda: app.screen.query_one("#create", Button).disabled, 5, "Create disabled"
        )
        error = text_of(app, "#error")
        assert "The watchdog cannot run: you may not attach its service account" in error
        assert 'switch "Watchdog" OFF on Review' in error and "serviceAccountUser" in error
        assert "--no-watchdog" not in error and "--service-account EMAIL`" in error  # quoted
        assert str(app.screen.query_one("#create", Button).tooltip).startswith("The watchdog")
        await press(pilot, "#create")
        assert type(app.screen).__name__ == "ReviewScreen" and app.handle is None

        app.screen.query_one("#watchdog", Switch).value = False  # the way on it names
        await until(
            pilot, lambda: not app.screen.query_one("#create", Button).disabled, 5, "Create back"
        )
    assert sandbox_nodes(home) == {}  # no create request reached the sandbox
    assert not (home / "sandbox" / "ledger.jsonl").exists()


async def test_account_says_off_is_real_and_billed(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, "RouteScreen")
        await pilot.press("enter")
        await on_screen(pilot, "AccountScreen")
        app.screen.query_one("#practice", Switch).value = False
        await pilot.pause()
        label = text_of(app, "#practice-label")
        assert "OFF (real: creates billed resources)" in label
        assert "nothing billed" not in label and "sandbox" not in label


async def test_typing_in_the_size_box_replaces_the_size_it_opens_with(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await walk_to_capacity(pilot)
        size = app.screen.query_one("#size", Input)
        assert app.focused is size and size.value == "48"
        await pilot.press("3", "2")
        assert size.value == "32"  # not 4832
        await pilot.press("enter", "enter")  # to the table, then its slice
        await on_screen(pilot, "ZonesScreen")
        assert app.state.state_gib == 32


@pytest.mark.parametrize("size", SIZES)
async def test_review_says_what_will_be_copied_back_and_where_the_run_folder_is(tmp_path, size):
    from tests.tui.pilot_helpers import walk_to_review

    script = tmp_path / "main.py"
    script.write_text("print('hi')\n")
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=size) as pilot:
        await walk_to_review(pilot)
        fetch = app.screen.query_one("#fetch", Input)
        app.screen.query_one("#script", Input).value = str(script)
        await pilot.pause()
        # The field's grey example is not a default: left empty, nothing is copied back.
        assert fetch.placeholder.startswith("e.g. ")
        assert fetch.border_subtitle == "nothing will be copied back"
        fetch.value = "reports/*.json"
        await pilot.pause()
        assert fetch.border_subtitle == "into the run folder's files/"
        assert on_screen_whole(app, "#create")
        # The session's run folder at every size, beside the guards (issue 55, item 10); a
        # folder too long for the row (this one) ends in "…" there, and Create stays whole.
        assert text_of(app, "#run-folder") == f"Run folder: {tmp_path}/runs/<run id>"
        assert on_screen_whole(app, "#run-folder") and on_screen_whole(app, "#guards")
        region = app.screen.query_one("#run-folder").region
        assert region.right <= size[0] and region.width > len("Run folder: runs/<run id>")


async def test_a_size_not_understood_empties_the_table_instead_of_leaving_it_stale(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await walk_to_capacity(pilot)
        table = app.screen.query_one(DataTable)
        assert table.row_count > 0
        await pilot.press(*"forty")  # replaces the selected 48
        assert "Not understood" in text_of(app, "#verdict")
        assert table.row_count == 0 and app.screen.fits == []
        await pilot.press("enter")  # nothing to take: the step stays
        assert type(app.screen).__name__ == "CapacityScreen"
        await pilot.press(*["backspace"] * 5, "3", "2")
        assert table.row_count > 0 and "32.0 GiB" in text_of(app, "#verdict")


async def test_the_recipe_box_shows_each_recipe_on_one_line_at_80x24(tmp_path):
    """Each recipe's label fits its box at the minimum size, never wrapped mid-figure."""
    from textual.widgets._select import SelectCurrent

    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await walk_to_capacity(pilot)
        select = app.screen.query_one("#recipe", Select)
        current = select.query_one(SelectCurrent)
        label = current.query_one("#label")
        for value in [v for _, v in select._options]:
            select.value = value
            await pilot.pause()
            text = str(label.render())
            assert label.region.width >= len(text), (text, label.region.width)


def test_the_capacity_help_says_why_spare_is_under_the_course_s_hbm_less_state():
    from tpuwizard.tui.screens.capacity import CapacityScreen

    help_text = " ".join(CapacityScreen.HELP.split())
    assert "'total' is the course's rule: the slice's HBM in all is at least the state" in help_text
    assert "usable HBM" in help_text and "less its share of the state" in help_text


def test_flex_start_s_capacity_notes_say_dollars_an_hour_once(monkeypatch):
    from tpuwizard.core.plan import cost, fit
    from tpuwizard.tui.screens.capacity import price_notes

    brief = "The offline table's prices while the Billing Catalog is read"
    monkeypatch.setattr(cost, "catalog_brief", lambda: brief)
    fits = fit.plan(48, fit.select_slices(single_host=True), route="flex")
    said = price_notes(fits)
    assert said.count("$/h:") == 1 and cost.FLEX_PRICE_NOTE in said
    assert "; the offline table's prices while" in said
