"""Review's "Take this to GKE": the plan as reviewed so far, handed to GKE through xpk, a JobSet
or SkyPilot, as ``tpuwizard export`` writes it. It only writes files (the core's hand-over:
core/handover); nothing is created, and the dialog says where the files are."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from tpuwizard.core.errors import BadInput

if TYPE_CHECKING:
    from tpuwizard.core.handover.export import Written
    from tpuwizard.tui.state import WizardState

TARGETS = (
    ("xpk", "xpk commands"),
    ("jobset", "JobSet YAML"),
    ("skypilot", "SkyPilot task"),
    ("gcluster", "Cluster Toolkit"),
)
WORKLOAD = "tpuwizard-run"  # the workload's name where Review's Name is empty
# The optional admission fields: (id and make_plan's keyword, title, placeholder).
ADMISSION = (
    ("queue", "Kueue queue", "optional"),
    ("priority", "Priority class", "optional"),
    ("reservation", "Reservation", "optional"),
)


class GkeExportScreen(ModalScreen["list[Written] | None"]):
    """Dismissed with the files written (the last one the target's), or None when closed."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]
    DEFAULT_CSS = """
    GkeExportScreen RadioSet { height: auto; layout: horizontal; }
    GkeExportScreen Input { width: 1fr; }
    """

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        self.written: list[Written] | None = None

    def compose(self) -> ComposeResult:
        accelerator, why = suggested_slice(self.state)
        with Vertical(id="dialog"):
            yield Static(
                "[b]Take this to GKE[/b]: tpuwizard writes the commands or files for the "
                "engine you choose into a folder of their own in your script's folder. It "
                "creates nothing, and its ledger, deadline and verified teardown stop there."
                + (f"\n{why}" if why else ""),
                id="gke-intro",
            )
            with RadioSet(id="target"):
                for i, (key, label) in enumerate(TARGETS):
                    yield RadioButton(label, value=i == 0, id=f"gke-{key}")
            with Horizontal():
                field = Input(value=accelerator, id="gke-accelerator")
                field.border_title = "One slice"
                yield field
                slices = Input(value="1", id="gke-slices")
                slices.border_title = "Slices (Multislice)"
                yield slices
            # Where Kueue and GKE admit the job (export's --queue, --priority, --reservation):
            # empty leaves each out; the header says what that means.
            with Horizontal():
                for key, title, hint in ADMISSION:
                    optional = Input(placeholder=hint, id=f"gke-{key}")
                    optional.border_title = title
                    yield optional
            yield Static(id="gke-written")
            with Horizontal():
                yield Button("Write", id="gke-write", variant="success")
                yield Button("Close", id="gke-close")

    def on_mount(self) -> None:
        self.query_one("#gke-write", Button).focus()

    def typed(self, key: str) -> str:
        return self.query_one(f"#gke-{key}", Input).value.strip()

    def target(self) -> str:
        index = self.query_one("#target", RadioSet).pressed_index
        return TARGETS[max(index, 0)][0]

    @on(Button.Pressed, "#gke-write")
    def write(self) -> None:
        shown = self.query_one("#gke-written", Static)
        try:
            self.written = write_for(
                self.state,
                self.target(),
                self.query_one("#gke-accelerator", Input).value.strip(),
                self.query_one("#gke-slices", Input).value.strip(),
                {
                    key: self.query_one(f"#gke-{key}", Input).value.strip()
                    for key, _, _ in ADMISSION
                },
            )
        except BadInput as err:
            shown.update(f"[b]Not written:[/b] {err}")
            return
        shown.update(written_words(self.written))

    @on(Button.Pressed, "#gke-close")
    def action_close(self) -> None:
        self.dismiss(self.written)


def suggested_slice(state: WizardState) -> tuple[str, str]:
    """The slice to hand over: the one chosen, or, where it does not hold the state, the
    smallest larger one that does (with the words saying why)."""
    from tpuwizard.core.handover.larger import larger_slice
    from tpuwizard.core.plan import catalog, fit

    try:
        chosen = fit.fit_slice(state.state_gib, state.slice)
    except catalog.UnknownAcceleratorError:
        return state.accelerator, ""
    larger = None if chosen.fits_sharded else larger_slice(state.state_gib, route=state.route)
    if larger is None:
        return state.accelerator, ""
    return larger.name, (
        f"{state.accelerator} does not hold {state.state_gib:g} GiB: {larger.name} is the "
        "smallest single slice that does. More slices add copies, not room."
    )


def write_for(
    state: WizardState,
    target: str,
    accelerator: str,
    slices: str,
    admission: dict[str, str] | None = None,
) -> list[Written]:
    """Check the plan with the core's rules (BadInput says what to change) and write it.
    ``admission``: the queue, priority class and reservation typed (an empty one: not given)."""
    from tpuwizard.core.handover.export import placed, render, write_export
    from tpuwizard.core.handover.place import export_place
    from tpuwizard.core.handover.plan import make_plan
    from tpuwizard.core.launch.plan.packages import package_problems
    from tpuwizard.words.choice_words import all_words

    typed = admission or {}
    from tpuwizard.words.typed_numbers import typed_whole

    count = typed_whole(slices, "a whole number of slices such as 1 or 2")
    specs, script = state.package_request().specs, state.workload.script
    problems = all_words(package_problems(specs), "wizard")
    if problems:
        raise BadInput(" ".join(problems))
    plan = make_plan(
        accelerator,
        slices=count,
        route=state.route,
        packages=[s.text for s in specs],
        script=script.name if script is not None else None,
        max_run_minutes=state.deadline.max_run_minutes,
        workload=state.name or WORKLOAD,
        zone=state.zone,
        project=None if state.practice else state.project,  # practice's project is no real one
        jax=state.workload.jax,  # Review's worker JAX (F3)
        queue=typed.get("queue") or None,
        priority=typed.get("priority") or None,
        reservation=typed.get("reservation") or None,
    )
    # No --out here: the export's own folder in the script's folder (core/handover/place.py).
    fix = "change the Name on Review (the file is named after it)"
    place = export_place(target, None, script, fix="move it away")
    plan = placed(plan, place)
    text = render(target, plan)  # before any file is written: it may refuse the pair
    # No --force here: a file of the user's in the way is named, and left as it is.
    return write_export(target, plan, text, place, fix=fix)


def written_words(written: list[Written]) -> str:
    """Where the files are, the target's first; nothing was created by writing them."""
    *shipped, main = written
    lines = [f"Wrote {main.what}: [b]{shown_path(main.path)}[/b] (nothing was created)."]
    lines.append(
        "Beside it, in its own folder: "
        + ", ".join(f"{w.path.name} ({w.what})" for w in shipped)
        + "."
    )
    lines.append("Its header says what bills while idle and how to tear down.")
    return "\n".join(lines)


def shown_path(path: Path) -> str:
    """A path as a user reads it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
