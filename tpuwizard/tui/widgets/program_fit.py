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
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Static

from tpuwizard.core.errors import BadInput
from tpuwizard.core.plan import fit, program_advice, program_fit, program_result
from tpuwizard.core.plan.jax_versions import compile_words
from tpuwizard.tui.answers import ProgramPick
from tpuwizard.tui.widgets.typed_input import TypedInput

# What the table is, in words the code can back: the bytes are the compiler's for each slice,
# and a step time it predicts (so the price per 1000 steps) is a lower bound.
PREDICTION_WORDS = (
    "Predicted by the compiler for each slice: the bytes are its own; step and $/1k steps are "
    "at least these (>=: XLA's step estimate is a lower bound). On a TPU VM, `tpuwizard fit "
    "--program FILE --measure` runs the step and shows the measured figures beside them (on a "
    "kept node: add --node NAME)."
)


# Without libtpu nothing is compiled: said once, with the line that installs it.
SHAPES_WORDS = (
    "Shapes only (no libtpu): nothing was compiled. Each row counts the state's bytes from its "
    "shapes; outputs and temporaries are not counted, and no step time is known. For the "
    f"compiler's own figures: {program_fit.INSTALL_LINE} (Linux on x86-64)."
)
NO_PLAN_WORDS = (
    "For a program to start from, see mlp_adam.py in the examples folder of tpuwizard's "
    "repository, and the guide: docs/guides/fit.md (fit --program)."
)


def shown_notes(results: list[program_result.SliceProgramFit], method: str) -> list[str]:
    """The notes under the table: each slice's own, except the shapes-only note that every
    slice would repeat (:data:`SHAPES_WORDS` says it once)."""
    notes = program_advice.slice_notes(results)
    if method != "shapes-only":
        return notes
    return [n for n in notes if "from the shapes (no libtpu)" not in n]


def _size(count: int | None) -> str:
    return "-" if count is None else program_advice.size_text(count)


class ProgramFitScreen(ModalScreen[ProgramPick | None]):
    """Pick a program file, watch the fit table fill, pick a slice (or Esc to go back)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Back")]
    DEFAULT_CSS = """
    ProgramFitScreen { align: center middle; }
    ProgramFitScreen > Vertical { width: 96%; height: 90%; border: thick $accent;
        background: $surface; padding: 0 1; }
    ProgramFitScreen #program-row { height: auto; }
    ProgramFitScreen #program-path { width: 1fr; }
    ProgramFitScreen #program-status { height: auto; max-height: 6; }
    ProgramFitScreen DataTable { height: 1fr; min-height: 6; }
    ProgramFitScreen #program-notes { height: auto; max-height: 5; }
    """

    def __init__(self, program: str = "", kept_node: str | None = None) -> None:
        super().__init__()
        self.program = program
        # A kept node (tpuwizard up) to measure the step on, offered beside the compile.
        self.kept_node = kept_node
        self.planner: program_fit.ProgramPlanner | None = None
        self.results: list[program_result.SliceProgramFit] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "[b]From my program[/b]: a file whose tpuwizard_plan(mesh) returns (step, args)."
            )
            with Horizontal(id="program-row"):
                yield TypedInput(
                    self.program,
                    placeholder="your program's file, e.g. train.py",
                    id="program-path",
                )
                yield Button("Compile", id="compile", variant="primary")
                yield Button("Cancel", id="cancel", disabled=True)
                if self.kept_node:
                    yield Button(f"Measure on {self.kept_node}", id="measure-node", disabled=True)
            yield Static(id="program-status")
            yield DataTable(id="program-fits", cursor_type="row", zebra_stripes=True)
            # The notes scroll in a few rows of their own: the table keeps its room (issue 49).
            with VerticalScroll(id="program-notes"):
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
            status.update("Shapes only (no libtpu): counting the state's bytes for each slice...")
        else:
            status.update("Compiling for each slice...")
        self.compile_all(self.planner)

    @work(thread=True, exclusive=True, group="program-fit")
    def compile_all(self, planner: program_fit.ProgramPlanner) -> None:
        try:
            for result in planner.results():
                self.app.call_from_thread(self.add_result, result)
        except program_result.ProgramInputError as err:
            more = f" {NO_PLAN_WORDS}" if err.kind == "no-function" else ""
            self.app.call_from_thread(self.finish, f"[b]Your program:[/b] {err}{more}")
            return
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
        verb = "Counted" if self.planner and self.planner.method == "shapes-only" else "Compiled"
        self.query_one("#program-status", Static).update(f"{verb} {done} of {total} slices...")

    def finish(self, problem: str | None) -> None:
        self.query_one("#cancel", Button).disabled = True
        status = self.query_one("#program-status", Static)
        if problem:
            status.update(problem)
            return
        fitting = [r.name for r in self.results if r.fits]
        done = (
            "Done, shapes only: the state"
            if self.planner is not None and self.planner.method == "shapes-only"
            else "Done:"
        )
        status.update(
            f"{done} fits on {', '.join(fitting)}. Pick a slice (Enter)."
            if fitting
            else "Done: it fits on none of these slices; see the advice below."
        )
        method = self.planner.method if self.planner is not None else "tpu-compile"
        lines = [*shown_notes(self.results, method), *program_advice.overall(self.results)]
        if self.planner is not None:  # which JAX compiled; Review picks the worker's (F3)
            lines.append(compile_words(None, self.planner.method == "tpu-compile"))
        said = SHAPES_WORDS if method == "shapes-only" else PREDICTION_WORDS
        if self.kept_node:
            self.query_one("#measure-node", Button).disabled = False
        self.query_one("#program-advice", Static).update(Text("\n".join([said, *lines])))

    @on(Button.Pressed, "#measure-node")
    def measure_on_node(self) -> None:
        """Run the step on the kept node, as ``fit --measure --node`` does; its figures go beside
        the prediction (a practice node's are labelled CPU and replace nothing)."""
        if self.planner is None or not self.kept_node:
            return
        from tpuwizard.core.cancel import CancelToken

        self._measuring = CancelToken()
        self.query_one("#measure-node", Button).disabled = True
        self.query_one("#cancel", Button).disabled = False
        self.query_one("#program-status", Static).update(
            f"Measuring on {self.kept_node} (copying the folder, then running the step)..."
        )
        self.measure_all(self.planner, self.kept_node, self._measuring)

    @work(thread=True, exclusive=True, group="program-measure")
    def measure_all(self, planner: program_fit.ProgramPlanner, name: str, token: Any) -> None:
        from tpuwizard.core.launch.events import launch_events as ev
        from tpuwizard.core.launch.workers.held_chip import ChipHeld
        from tpuwizard.core.plan import program_at_hand
        from tpuwizard.words.program_table import measured_words

        def emit(event: ev.Event) -> None:
            if isinstance(event, ev.ScriptLine):
                text = f"{name}: {event.text}"
                self.app.call_from_thread(self.query_one("#program-status", Static).update, text)

        try:
            session: Any = getattr(self.app, "session", None)
            kept = session.kept.open(name)
            said, code = kept.measure(
                planner.program, planner.function, planner.axes, planner.measure_steps, emit, token
            )
            run = program_at_hand.from_node(said, code, kept.entry.resource.slice)
        except ChipHeld as held:  # nothing was copied or started
            from tpuwizard.words.held_chip_text import GO_ON_MEASURE, chip_held_lines

            self.app.call_from_thread(
                self.measured, "\n".join(chip_held_lines(held, GO_ON_MEASURE))
            )
            return
        except Exception as err:  # a stop, the node gone, the program's own error: said
            words = "Stopped." if token.is_set() else f"Not measured on {name}: {err}"
            self.app.call_from_thread(self.measured, words)
            return
        row = next((r for r in self.results if r.name == run.slice_name), None)
        if row is None:
            words = f"{name} is a {run.slice_name}, which this table does not hold."
        else:
            slice_ = next(s for s in planner.slices if s.name == run.slice_name)
            measured = program_at_hand.with_measurement(row, slice_, run, planner.route)
            words = measured_words(measured)
        self.app.call_from_thread(self.measured, words)

    def measured(self, words: str) -> None:
        self.query_one("#cancel", Button).disabled = True
        if self.kept_node:
            self.query_one("#measure-node", Button).disabled = False
        self.query_one("#program-status", Static).update(Text(words))

    @on(Button.Pressed, "#cancel")
    def stop(self) -> None:
        measuring = getattr(self, "_measuring", None)
        if measuring is not None:
            measuring.set("stopped in the wizard")
        if self.planner is not None:
            self.planner.cancel()
        self.workers.cancel_group(self, "program-fit")
        self.query_one("#cancel", Button).disabled = True
        if self.planner is not None and len(self.results) < len(self.planner.slices):
            self.query_one("#program-status", Static).update("Cancelled.")

    @on(DataTable.RowSelected, "#program-fits")
    def choose(self, event: DataTable.RowSelected) -> None:
        from tpuwizard.words.program_table import program_verdict

        self.stop()
        name = str(event.row_key.value)
        row = next(r for r in self.results if r.name == name)
        program = self.planner.program.name if self.planner is not None else "?"
        self.dismiss(ProgramPick(name, program_verdict(program, row), row.fits))

    def action_close(self) -> None:
        self.stop()
        self.dismiss(None)

    def on_unmount(self, _event: Any = None) -> None:
        if self.planner is not None:
            self.planner.cancel()
