"""Step 4: where. Zones that offer the chosen type, live from the API or documented (labelled),
those that lately had capacity for it first, with what the last attempt in each found."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.widgets import Button, DataTable, Static

from tpuwizard.core.cloud.zones import OFFERED_NOTE, ZoneSurvey
from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import catalog
from tpuwizard.event_text import survey_words
from tpuwizard.session.decision import ZoneAnswer
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.widgets.row_mark import add_mark_column, mark_row


class ZonesScreen(WizardScreen[str]):
    STEP = "4 Zones"
    HELP = (
        "Zones that offer your accelerator type. 'Offered' is not 'free right now': a create "
        "can still meet a stockout, and tpuwizard then offers the other zones."
    )

    def __init__(
        self, accelerator: str, current: str | None, survey_fn: Callable[[], ZoneAnswer]
    ) -> None:
        """``survey_fn``: the session's survey (``Session.zone_survey``), run off the UI thread."""
        super().__init__()
        self.accelerator, self.current, self.survey_fn = accelerator, current, survey_fn
        self.zones: list[str] = []
        self.tried_column = False

    def compose_body(self) -> ComposeResult:
        runtime = catalog.parse_accelerator(self.accelerator).generation.runtime_version
        yield Static(
            f"[b]Zones offering {self.accelerator}[/b] (runtime version {runtime})", classes="title"
        )
        yield Static("Looking up zones...", id="source")
        yield DataTable(id="zones", cursor_type="row")
        yield Static(OFFERED_NOTE, classes="note")
        yield Button("Next", id="next", variant="primary")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        add_mark_column(table)  # ▶ on the chosen zone: not said by colour alone
        table.add_columns("zone", "offers")
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

    def show(self, survey: ZoneSurvey, label: str, answer: ZoneAnswer | None = None) -> None:
        self.zones = survey.offering(self.accelerator)
        tried: dict[str, str] = {}
        if answer is not None:
            self.zones = answer.by_recent_success(self.accelerator, self.zones)
            tried = answer.last_tried(self.accelerator)
        self.query_one("#source", Static).update(f"Source: {label}")
        table = self.query_one(DataTable)
        table.clear()
        if not self.tried_column and any(z in tried for z in self.zones):
            table.add_column("last tried")  # only once something was tried: no empty column
            self.tried_column = True
        for zone in self.zones:
            cells = ["", zone, self.accelerator] + (
                [tried.get(zone, "")] if self.tried_column else []
            )
            table.add_row(*cells, key=zone)
        if self.current in self.zones:
            table.move_cursor(row=self.zones.index(self.current))
        mark_row(table, table.cursor_row)

    @on(DataTable.RowHighlighted)
    def mark(self, event: DataTable.RowHighlighted) -> None:
        mark_row(event.data_table, event.cursor_row)

    @on(Button.Pressed, "#next")
    @on(DataTable.RowSelected)
    def choose(self) -> None:
        if self.zones:
            self.dismiss(self.zones[self.query_one(DataTable).cursor_row])
