"""Step 4: where. Zones that offer the chosen type, live from the API or documented (labelled):
those the chosen route can use first (among them, those that lately had capacity for it first),
each with the route's price there and what the last attempt in it found; the rest say why not."""

from __future__ import annotations

from collections.abc import Callable

from textual import events, on, work
from textual.app import ComposeResult
from textual.widgets import Button, DataTable, Static

from tpuwizard.core.cloud.zones import OFFERED_NOTE, RouteZone, ZoneSurvey
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog
from tpuwizard.session.decision import ZoneAnswer
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.row_mark import add_mark_column, mark_row
from tpuwizard.words.figures import price_cell, price_footnote
from tpuwizard.words.session_text import survey_words


class ZonesScreen(WizardScreen[str]):
    STEP = "4 Zones"
    HELP = (
        "Zones that offer your accelerator type, those your route can use first. '$/h' is the "
        "route's price in that zone, an estimate; * marks a list price that may differ in that "
        "region, or says why there is none. The cheapest zone your route can use comes first; "
        "'(unconfirmed)' marks a zone the catalog's source lists without confirming it, and "
        "those come after the rest. A zone your route cannot use says why, and cannot "
        "be chosen. 'Offered' is not 'free right now': a create can still meet a stockout, and "
        "tpuwizard then offers the other zones."
    )

    def __init__(
        self,
        slice_: catalog.Slice,
        current: str | None,
        survey_fn: Callable[[], ZoneAnswer],
        route: str = "vm",
    ) -> None:
        """``survey_fn``: the session's survey (``Session.zone_survey``), run off the UI thread."""
        super().__init__()
        self.slice, self.accelerator = slice_, slice_.name
        self.current, self.survey_fn = current, survey_fn
        self.route = route
        self.zones: list[str] = []  # in the table's order: the route's own first
        self.rows: list[RouteZone] = []
        self.tried_column = False
        self.enter_early = False  # Enter came before the zones did: it takes the first one
        self.shown: tuple[ZoneSurvey, str, ZoneAnswer | None] | None = None  # for a redraw

    def compose_body(self) -> ComposeResult:
        runtime = self.slice.generation.runtime_version
        yield Static(
            f"[b]Zones offering {self.accelerator}[/b] (runtime version {runtime})", classes="title"
        )
        yield Static("Looking up zones...", id="source")
        yield DataTable(id="zones", cursor_type="row")
        yield Static(id="prices", classes="note")
        yield Static(OFFERED_NOTE, classes="note")
        yield Button("Next", id="next", variant="primary")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        add_mark_column(table)  # ▶ on the chosen zone: not said by colour alone
        table.add_columns("zone", "$/h", f"for {ROUTE_WORDS.get(self.route, self.route)}")
        table.focus()  # Enter takes the highlighted zone, no Tab first
        self.load()

    @work(thread=True, exclusive=True, group="zones", exit_on_error=False)
    def load(self) -> None:
        try:
            answer = self.survey_fn()  # a failed live survey is the catalog, said so
        except BadInput as err:  # nothing to survey with (no project): say what to do
            self.app.call_from_thread(self.show, ZoneSurvey("documented", {}), str(err))
            return
        self.app.call_from_thread(self.show, answer.survey, survey_words(answer), answer)

    def prices_changed(self) -> None:
        """The Billing Catalog's read landed: the rows' prices are its now (or say why not),
        the highlighted zone kept."""
        if self.shown is not None and self.rows:
            self.current = self.zones[self.query_one(DataTable).cursor_row]
            self.show(*self.shown)

    def show(self, survey: ZoneSurvey, label: str, answer: ZoneAnswer | None = None) -> None:
        self.shown = (survey, label, answer)
        # No answer: the survey could not run, and its empty table offers no zone.
        answer = answer or ZoneAnswer(survey, practice=False)
        tried = answer.last_tried(self.accelerator)
        self.rows = answer.route_rows(self.slice, self.route)
        self.zones = [r.zone for r in self.rows]
        self.query_one("#source", Static).update(f"Source: {label}")
        table = self.query_one(DataTable)
        table.clear()
        if not self.tried_column and any(z in tried for z in self.zones):
            table.add_column("last tried")  # only once something was tried: no empty column
            self.tried_column = True
        for row in self.rows:
            price = price_cell(row.price.hourly, row.price.note, row.price.at_most)
            zone = row.zone + (" (unconfirmed)" if row.unconfirmed else "")
            cells = ["", zone, price, row.unusable or "usable"]
            cells += [tried.get(row.zone, "")] if self.tried_column else []
            table.add_row(*cells, key=row.zone)
        footnote = price_footnote([r.price.note for r in self.rows])
        self.query_one("#prices", Static).update(footnote)
        self.query_one("#prices", Static).display = bool(footnote)
        # The zone chosen before while this route can use it; else the route's first: the
        # cheapest confirmed one.
        usable = [r.zone for r in self.rows if not r.unusable]
        start = self.current if self.current in usable else next(iter(usable or self.zones), None)
        if start is not None:
            table.move_cursor(row=self.zones.index(start))
        mark_row(table, table.cursor_row)
        if self.enter_early:  # a key typed while the survey ran is not lost
            self.enter_early = False
            self.choose()

    def on_key(self, event: events.Key) -> None:
        # An empty table posts no RowSelected: an Enter typed before the survey's rows came
        # is kept here, and takes the first usable zone once they come.
        if event.key == "enter" and not self.rows:
            self.enter_early = True

    @on(DataTable.RowHighlighted)
    def mark(self, event: DataTable.RowHighlighted) -> None:
        mark_row(event.data_table, event.cursor_row)

    @on(Button.Pressed, "#next")
    @on(DataTable.RowSelected)
    def choose(self) -> None:
        if not self.rows:
            self.enter_early = True
            return
        row = self.rows[self.query_one(DataTable).cursor_row]
        if row.unusable:  # said on its row; the source line says what to do
            self.query_one("#source", Static).update(
                f"[b]{row.zone} cannot be used:[/b] {row.unusable}. Choose another zone, or go "
                "Back to choose another route."
            )
            return
        self.dismiss(row.zone)


ROUTE_WORDS = {"vm": "on demand", "spot": "spot", "flex": "Flex-start"}
