"""Step 3: does the training state fit? The fit table follows what you type."""

from __future__ import annotations

from dataclasses import replace

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Select, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import cost, fit
from tpuwizard.tui.answers import CapacityAnswer, ProgramPick
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.row_mark import add_mark_column, mark_row
from tpuwizard.tui.widgets.typed_input import TypedInput
from tpuwizard.words.figures import price_cell

RECIPE_TITLE = "recipe: B/param"


class CapacityScreen(WizardScreen[CapacityAnswer]):
    STEP = "3 Capacity"
    HELP = (
        "Type the size of your training state (48, 48GiB, 51.5GB) or a parameter count with "
        "a recipe; Enter takes you to the table. 'HBM' is GiB per chip, 'all' GiB in the "
        "slice; ▶ marks the slice chosen. 'shard' means the state split over every chip "
        "fits; 'repl' that a full copy fits one device; 'total' is the course's rule: the "
        "slice's HBM in all is at least the state. 'spare' is what each chip keeps for "
        "activations: its usable HBM (a little under 'HBM': the runtime holds some back; "
        "`tpuwizard fit` lists it as 'usable') less its share of the state, so it is smaller "
        "than the course's HBM minus state. Activations "
        "are not counted. The cheapest slice that holds the state is chosen for you; one that "
        "does not hold it needs a second yes. Launch runs single-host slices. 'From my "
        "program' compiles your own training step for each slice instead, activations "
        "included. '$/h' is the list price on the route you chose (for Flex-start, whose own "
        "price the catalog lacks, '<=' and on-demand's: the most it costs); a zone's own price "
        "can differ, and Review shows the chosen zone's. " + fit.ACTIVATION_NOTE
    )

    def __init__(
        self,
        state_gib: float,
        accelerator: str | None,
        params: str = "",
        recipe: str = "bf16-adam",
        route: str = "vm",
    ) -> None:
        super().__init__()
        self.state_gib, self.accelerator, self.route = state_gib, accelerator, route
        self.params, self.recipe = params, recipe
        self.fits: list[fit.SliceFit] = []
        self.suggested_params: str | None = None  # set when the size looks like parameters
        self.understood = False  # whether the fields as they are gave the table shown
        # Enter in a field sent the focus to the table and it has not landed yet: a busy app
        # handles keys late, and an Enter typed meanwhile still reaches the field.
        self.to_table = False
        self.short = False  # a short terminal (80x24): the table gives up rows

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="sizes"):
            # The values from the start, not set after mounting: a field focused with its text
            # selects it, so what is typed replaces it (48 typed over 48 is 48, not 4848).
            size = "" if self.params else f"{self.state_gib:g}"
            yield _titled(TypedInput(size, placeholder="48", id="size"), "State size (GiB)")
            yield _titled(TypedInput(self.params, placeholder="7B", id="params"), "or parameters")
            recipe = Select(
                # Short labels, the unit in the box's title: at 80 columns the box is about
                # 20 cells wide, and "bf16-adam (12 B/param)" wrapped mid-figure.
                [(f"{k}: {v[0]:g}", k) for k, v in fit.RECIPES.items()],
                value=self.recipe,
                id="recipe",
                allow_blank=False,
            )
            recipe.border_title = RECIPE_TITLE
            yield recipe
        with Horizontal(id="verdict-row"):
            yield Static(id="verdict")
            yield Button("Use as parameters", id="as-params")
        yield DataTable(id="fits", cursor_type="row", zebra_stripes=True)
        yield Static(fit.ACTIVATION_NOTE, classes="note", id="activation-note")
        with Horizontal(id="capacity-buttons"):
            yield Button("Next", id="next", variant="primary")
            yield Button("From my program...", id="from-program")

    def on_resize(self, event: events.Resize) -> None:
        # On a short terminal (80x24) the table scrolls within fewer rows and the note moves to
        # the help (F1), so Next stays on screen.
        self.short = event.size.height < 32
        self.query_one("#activation-note", Static).display = not self.short
        self.fit_table_height()

    def fit_table_height(self) -> None:
        # The line saying whose prices these are takes its rows from the table's (two where
        # it says why the catalog could not be read), so Next stays on screen.
        brief = cost.catalog_brief() or ""
        lines = 0 if not brief else 2 if "could not be read" in brief else 1
        self.query_one(DataTable).styles.max_height = 10 - lines if self.short else 16

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # Short headers so the table, $/h included, fits 80 columns; the CLI's names. The first
        # column marks the chosen row with ▶, not by the cursor's colour alone.
        add_mark_column(table)
        table.add_columns("slice", "chips", "HBM", "all", "shard", "repl", "total", "spare", "$/h")
        self.query_one("#as-params", Button).display = False
        for inner in self.query_one("#recipe", Select).query("SelectCurrent"):
            inner.border_title = RECIPE_TITLE  # the border drawn is the inner box's
        self.refresh_table()
        self.query_one("#size", Input).focus()

    @on(Input.Changed)
    @on(Select.Changed)
    def refresh_table(self) -> None:
        verdict = self.query_one("#verdict", Static)
        switch = self.query_one("#as-params", Button)
        switch.display = False
        self.understood = False
        try:
            params = self.query_one("#params", Input).value.strip()
            if params:
                recipe = str(self.query_one("#recipe", Select).value)
                state = fit.state_from_params(fit.parse_params(params), recipe)
            else:
                state = fit.parse_size_gib(self.query_one("#size", Input).value or "48")
        except fit.LooksLikeParams as err:
            self.suggested_params = err.params
            switch.label = f"Use {err.params} as parameters"
            switch.display = True
            self.show_no_table(f"[b]Not a size:[/b] {err}")
            return
        except BadInput as err:
            self.show_no_table(f"[b]Not understood:[/b] {err}")
            return
        self.state_gib = state
        self.fits = fit.plan(state, fit.select_slices(single_host=True), route=self.route)
        table = self.query_one(DataTable)
        table.clear()
        for f in self.fits:
            table.add_row(
                "",
                f.name,
                str(f.chips),
                f"{f.hbm_gib_per_chip:g}",
                f"{f.total_hbm_gib:g}",
                _yes(f.fits_sharded),
                _yes(f.fits_replicated),
                _yes(f.fits_total),
                f"{f.headroom_gib:.1f}",
                price_cell(f.price_per_hour_usd, "", f.price_at_most_usd),
                key=f.name,
            )
        table.move_cursor(row=self.fits.index(fit.preselected(self.fits, self.accelerator)))
        note = price_notes(self.fits)
        from tpuwizard.core.handover.larger import verdict_with_larger

        verdict.update(verdict_with_larger(state, self.fits, route=self.route, short=True) + note)
        self.fit_table_height()
        self.understood = True

    def prices_changed(self) -> None:
        """The Billing Catalog's read landed: the table's figures are its now (or say why not)."""
        if self.understood:
            self.refresh_table()

    def show_no_table(self, why: str) -> None:
        """What was typed gives no table: the last one is emptied, never left standing stale
        under the words that say why."""
        self.fits = []
        self.query_one(DataTable).clear()
        self.query_one("#verdict", Static).update(why)

    @on(Button.Pressed, "#from-program")
    def from_program(self) -> None:
        """Compile the user's own training step for each slice; a chosen row is the slice."""
        from tpuwizard.tui.widgets.program_fit import ProgramFitScreen

        def chosen(pick: ProgramPick | None) -> None:
            if pick is not None:
                self.dismiss(replace(self.answer(pick.accelerator), program=pick))

        self.app.push_screen(ProgramFitScreen(kept_node=self.kept_node()), chosen)

    def kept_node(self) -> str | None:
        """The one kept node to offer a measurement on, read from the ledger (no cloud call);
        none where no walk's session is open, or where several are kept (the CLI names one)."""
        from tpuwizard.session.kept.lines import node_id

        session = getattr(self.app, "session", None)
        if session is None:
            return None
        try:
            entries = session.kept.entries()
        except Exception:  # an unreadable ledger: nothing offered, the CLI still works
            return None
        return node_id(entries[0].resource) if len(entries) == 1 else None

    @on(DataTable.RowHighlighted)
    def remember(self, event: DataTable.RowHighlighted) -> None:
        if self.fits and 0 <= event.cursor_row < len(self.fits):
            self.accelerator = self.fits[event.cursor_row].name
        mark_row(event.data_table, event.cursor_row)

    @on(Input.Submitted)
    def to_the_table(self) -> None:
        """Enter in a field: what was typed is applied as it changed; if understood, the table
        takes the focus, where Enter takes the slice it highlights."""
        if not self.understood:
            return
        if self.to_table:  # a second Enter, typed before the first had moved the focus
            self.choose()
            return
        self.to_table = True
        self.query_one(DataTable).focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.to_table = False  # the focus has moved: the next Enter is where it landed

    @on(Button.Pressed, "#as-params")
    def use_as_parameters(self) -> None:
        if self.suggested_params:
            self.query_one("#size", Input).value = ""
            self.query_one("#params", Input).value = self.suggested_params
            self.query_one("#params", Input).focus()

    @on(Button.Pressed, "#next")
    @on(DataTable.RowSelected)
    def choose(self) -> None:
        if not self.fits or self.query_one("#as-params", Button).display:
            return  # what was typed is not understood yet: the verdict says why
        self.confirm_choice(self.fits[self.query_one(DataTable).cursor_row])

    @work(exclusive=True, group="capacity-confirm")
    async def confirm_choice(self, chosen: fit.SliceFit) -> None:
        from tpuwizard.tui.screens.confirm import ConfirmScreen

        if not chosen.fits_sharded:
            question = (
                f"[b]{chosen.name} is too small.[/b] {fit.slice_verdict(self.state_gib, chosen)}"
                "\nThe run will fail when the state does not fit. Use it anyway?"
            )
            if not await self.app.push_screen_wait(
                ConfirmScreen(question, f"Use {chosen.name} anyway", "Choose another slice")
            ):
                return
        self.dismiss(self.answer(chosen.name))

    def answer(self, accelerator: str) -> CapacityAnswer:
        """The slice chosen, with the size and the parameter count as the fields say now."""
        params = self.query_one("#params", Input).value.strip()
        recipe = str(self.query_one("#recipe", Select).value)
        return CapacityAnswer(self.state_gib, accelerator, params, recipe)


def _titled(widget: Input, title: str) -> Input:
    widget.border_title = title  # a label on the field's border: compact, and readable
    return widget


def price_notes(fits: list[fit.SliceFit]) -> str:
    """Under the verdict: Flex-start's bound where a figure is one, and whose prices these are
    once the session prices from the Billing Catalog's read (or waits for it)."""
    said = []  # one "$/h:" line, both notes in it
    if any(f.price_per_hour_usd is None and f.price_at_most_usd is not None for f in fits):
        said.append(cost.FLEX_PRICE_NOTE)
    source = cost.catalog_brief()
    if source:
        said.append(source[0].lower() + source[1:] if said else source)
    return f"\n$/h: {'; '.join(said)}." if said else ""


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"
