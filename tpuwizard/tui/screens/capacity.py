"""Step 3: does the training state fit? The fit table follows what you type."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Select, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import fit
from tpuwizard.event_text import money
from tpuwizard.tui.screens.base import WizardScreen


class CapacityScreen(WizardScreen):
    STEP = "3 Capacity"
    HELP = (
        "Type the size of your training state (48, 48GiB, 51.5GB) or a parameter count with "
        "a recipe. 'shard' means the state split over every chip fits; 'repl' that a full "
        "copy fits one device; 'total' the course's rule, total HBM >= state. Activations "
        "are not counted. Pick a single-host slice (launch runs those). 'From my program' "
        "compiles your own training step for each slice instead, activations included."
    )

    def __init__(self, state_gib: float, accelerator: str) -> None:
        super().__init__()
        self.state_gib, self.accelerator = state_gib, accelerator
        self.fits: list[fit.SliceFit] = []

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="sizes"):
            yield Input(placeholder="48 GiB", id="size")
            yield Input(placeholder="or parameters: 7B", id="params")
            yield Select(
                [(f"{k} ({v[0]:g} B/param)", k) for k, v in fit.RECIPES.items()],
                value="bf16-adam",
                id="recipe",
                allow_blank=False,
            )
        yield Static(id="verdict")
        yield DataTable(id="fits", cursor_type="row", zebra_stripes=True)
        yield Static(fit.ACTIVATION_NOTE, classes="note")
        with Horizontal(id="capacity-buttons"):
            yield Button("Next", id="next", variant="primary")
            yield Button("From my program...", id="from-program")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(
            "slice",
            "chips",
            "HBM/chip",
            "total",
            "shard",
            "repl",
            "fits total",
            "spare/chip",
            "$/h",
        )
        self.query_one("#size", Input).value = f"{self.state_gib:g}"
        self.refresh_table()

    @on(Input.Changed)
    @on(Select.Changed)
    def refresh_table(self) -> None:
        verdict = self.query_one("#verdict", Static)
        try:
            params = self.query_one("#params", Input).value.strip()
            if params:
                recipe = str(self.query_one("#recipe", Select).value)
                state = fit.state_from_params(fit.parse_params(params), recipe)
            else:
                state = fit.parse_size_gib(self.query_one("#size", Input).value or "48")
        except BadInput as err:
            verdict.update(f"[b]Not understood:[/b] {err}")
            return
        self.state_gib = state
        self.fits = fit.plan(state, fit.select_slices(single_host=True))
        table = self.query_one(DataTable)
        table.clear()
        for f in self.fits:
            table.add_row(
                f.name,
                str(f.chips),
                f"{f.hbm_gib_per_chip:g}",
                f"{f.total_hbm_gib:g}",
                _yes(f.fits_sharded),
                _yes(f.fits_replicated),
                _yes(f.fits_total),
                f"{f.headroom_gib:.1f}",
                money(f.price_per_hour_usd),
                key=f.name,
            )
        names = [f.name for f in self.fits]
        if self.accelerator in names:
            table.move_cursor(row=names.index(self.accelerator))
        verdict.update(fit.verdict(state, self.fits))

    @on(Button.Pressed, "#from-program")
    def from_program(self) -> None:
        """Compile the user's own training step for each slice; a chosen row is the slice."""
        from tpuwizard.tui.widgets.program_fit import ProgramFitScreen

        def chosen(name: str | None) -> None:
            if name:
                self.dismiss({"state_gib": self.state_gib, "accelerator": name})

        self.app.push_screen(ProgramFitScreen(), chosen)

    @on(Button.Pressed, "#next")
    @on(DataTable.RowSelected)
    def choose(self) -> None:
        table = self.query_one(DataTable)
        if not self.fits:
            return
        chosen = self.fits[table.cursor_row]
        self.dismiss({"state_gib": self.state_gib, "accelerator": chosen.name})


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"
