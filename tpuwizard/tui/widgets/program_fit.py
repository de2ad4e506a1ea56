""" "From my program": compile the user's training step for each single-host slice, in a worker.

The table fills slice by slice as each compile finishes (each row says how long it took); Cancel
kills the compiler process at once. Choosing a row dismisses with that slice's name.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import fit, program_advice, program_fit, program_result
from tpuwizard.core.plan.jax_versions import compile_words
from tpuwizard.tui.widgets.typed_input import TypedInput

# What the table is, in words the code can back: the bytes are the compiler's for each slice,
# and a step time it predicts (so the price per 1000 steps) is a lower bound.
PREDICTION_WORDS = (
    "Predicted by the compiler for each slice: the bytes are its own; step and $/1k steps are "
    "at least these (>=: XLA's step estimate is a lower bound). On a TPU VM, `tpuwizard fit "
    "--program FILE --measure` runs the step and shows the measured figures beside them."
)


def _size(count: int | None) -> str:
    return "-" if count is None else program_advice.size_text(count)


class ProgramFitScreen(ModalScreen[str | None]):
    """Pick a program file, watch the fit table fill, pick a slice (or Esc to go back)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back")]
    DEFAULT_CSS = """
    ProgramFitScreen { align: center middle; }
    ProgramFitScreen > Vertical { width: 96%; height: 90%; border: thick $accent;
        background: $surface; padding: 0 1; }
    ProgramFitScreen #program-row { height: auto; }
    ProgramFitScreen #program-path { width: 1fr; }
    ProgramFitScreen DataTable { height: 1fr; }
    """

    def __init__(self, program: str = "") -> None:
        super().__init__()
        self.program = program
        self.planner: program_fit.ProgramPlanner | None = None
        self.results: list[program_result.SliceProgramFit] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "[b]From my program[/b]: a Python file whose tpuwizard_plan(mesh) returns "
                "(step, args). Each slice's compile runs here, on this computer."
            )
            with Horizontal(id="program-row"):
                yield TypedInput(
                    self.program,
                    placeholder="your program's file, e.g. train.py",
                    id="program-path",
                )
                yield Button("Compile", id="compile", variant="primary")
                yield Button("Cancel", id="cancel", disabled=True)
            yield Static(id="program-status")
            yield DataTable(id="program-fits", cursor_type="row", zebra_stripes=True)
            yield Static(id="program-advice", classes="note")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(
            "slice", "dev", "args", "peak", "usable", "fits", ">=step", ">=$/1k steps", "took"
        )
        if self.program:
            self.start()

    @on(Button.Pressed, "#compile")
    @on(Input.Submitted, "#program-path")
    def start(self) -> None:
        self.stop()
        status = self.query_one("#program-status", Static)
        try:
            self.planner = program_fit.ProgramPlanner(
                self.query_one("#program-path", Input).value.strip(),
                fit.select_slices(single_host=True),
            )
        except BadInput as err:
            status.update(f"[b]Not understood:[/b] {err}")
            return
        self.results = []
        self.query_one(DataTable).clear()
        self.query_one("#program-advice", Static).update("")
        self.query_one("#cancel", Button).disabled = False
        if self.planner.method == "shapes-only":
            status.update(f"No libtpu here: counting the state only. {program_fit.INSTALL_LINE}")
        else:
            status.update("Compiling for each slice...")
        self.compile_all(self.planner)

    @work(thread=True, exclusive=True, group="program-fit")
    def compile_all(self, planner: program_fit.ProgramPlanner) -> None:
        try:
            for result in planner.results():
                self.app.call_from_thread(self.add_result, result)
        except BadInput as err:
            self.app.call_from_thread(self.finish, f"[b]Your program:[/b] {err}")
            return
        self.app.call_from_thread(self.finish, None)

    def add_result(self, result: program_result.SliceProgramFit) -> None:
        self.results.append(result)
        b = result.per_device_bytes
        self.query_one(DataTable).add_row(
            result.name,
            str(result.devices),
            _size(b["arguments"]),
            _size(b["peak"]),
            _size(result.usable_bytes_per_device),
            {True: "yes", False: "no", None: "?"}[result.fits],
            # Predictions of time are lower bounds: the columns say "at least" (>=).
            "?" if result.step_seconds is None else f"{result.step_seconds * 1000:.3g} ms",
            "?" if result.usd_per_1000_steps is None else f"${result.usd_per_1000_steps:.2g}",
            "cached" if result.cached else f"{result.seconds:.1f} s",
            key=result.name,
        )
        done, total = len(self.results), len(self.planner.slices) if self.planner else 0
        self.query_one("#program-status", Static).update(f"Compiled {done} of {total} slices...")

    def finish(self, problem: str | None) -> None:
        self.query_one("#cancel", Button).disabled = True
        status = self.query_one("#program-status", Static)
        if problem:
            status.update(problem)
            return
        fitting = [r.name for r in self.results if r.fits]
        status.update(
            f"Done: fits on {', '.join(fitting)}. Pick a slice (Enter)."
            if fitting
            else "Done: it fits on none of these slices; see the advice below."
        )
        lines = [*program_advice.slice_notes(self.results), *program_advice.overall(self.results)]
        if self.planner is not None:  # which JAX compiled; Review picks the worker's (F3)
            lines.append(compile_words(None, self.planner.method == "tpu-compile"))
        self.query_one("#program-advice", Static).update(
            Text("\n".join([*lines, PREDICTION_WORDS]))
        )

    @on(Button.Pressed, "#cancel")
    def stop(self) -> None:
        if self.planner is not None:
            self.planner.cancel()
        self.workers.cancel_group(self, "program-fit")
        self.query_one("#cancel", Button).disabled = True
        if self.planner is not None and len(self.results) < len(self.planner.slices):
            self.query_one("#program-status", Static).update("Cancelled.")

    @on(DataTable.RowSelected, "#program-fits")
    def choose(self, event: DataTable.RowSelected) -> None:
        self.stop()
        self.dismiss(str(event.row_key.value))

    def action_close(self) -> None:
        self.stop()
        self.dismiss(None)

    def on_unmount(self, _event: Any = None) -> None:
        if self.planner is not None:
            self.planner.cancel()
