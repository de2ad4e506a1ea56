"""Step 5: review and create. The name is checked as you type; nothing is created before Create."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button, Input, Label, Static, Switch

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose.tpu7x_access import access_note
from tpuwizard.core.deadlines import STALL_TIMEOUT_MIN, EndedBy
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.packages import AUTO_FILE, COURSE_PACKAGES, specs_from_field
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Resume, Workload
from tpuwizard.core.plan import cost, fit
from tpuwizard.tui.answers import GuardsAnswer, ReviewAnswer
from tpuwizard.tui.host import host
from tpuwizard.tui.screens.base import WizardScreen
from tpuwizard.tui.screens.review_folder import folder_agreed, show_folder
from tpuwizard.tui.state import WizardState
from tpuwizard.tui.step_notes import StepNotes
from tpuwizard.tui.widgets.typed_input import TypedInput
from tpuwizard.tui.widgets.worker_jax import JaxPicker, WorkerJax
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.course_text import fetch_note
from tpuwizard.words.figures import count, money
from tpuwizard.words.guard_text import STALL_TITLE, guards_line
from tpuwizard.words.resume_text import RESUME_HELP, RESUME_PLACEHOLDER, RESUME_TITLE
from tpuwizard.words.resume_text import field_words as resume_field_words
from tpuwizard.words.typed_numbers import typed_number

if TYPE_CHECKING:
    from tpuwizard.session.prepare.outcomes import Outlook


def deadline_typed(text: str) -> tuple[float, str | None]:
    """The Deadline field's minutes, and what is wrong with what was typed (None: nothing).
    What is no number is -1 minutes, which the plan refuses with the deadline's bounds."""
    try:
        return typed_number(text, "a number of minutes"), None
    except BadInput as err:
        return -1.0, f"Deadline: {err}"


class ReviewScreen(WizardScreen[ReviewAnswer]):
    STEP = "5 Review"
    BINDINGS: ClassVar[list[BindingType]] = [
        *WizardScreen.BINDINGS,
        Binding("f2", "course_packages", "Course's packages"),
        Binding("f3", "worker_jax", "JAX"),
        # Said on the screen beside the worker's JAX ("F4: change"): the key bar is full at 80.
        Binding("f4", "guards", STALL_TITLE, show=False),
        Binding("f6", "gke_export", "Take to GKE"),
    ]
    HELP = (
        "Check what will be created. The deadline is Flex-start's maximum run duration; for "
        "other routes it holds only with the watchdog, which deletes the VM at the deadline even "
        "if this computer is off (the line under the fields says which). With Compute Engine "
        "ON (v5p, v6e), Google deletes the VM at the deadline itself: no watchdog is needed. "
        "A multi-host slice there (v6e-16, v5p-16 and up) is a workload policy, an instance "
        "template and a BULK MIG, which tpuwizard makes and deletes for you: the bulk mode "
        "Google recommends (the course text's Route 2B asks for a VM with a MIG resize request "
        "instead, which Google documents, though users report it refused for TPU MIGs: "
        "'Creating resize requests for managed instance group with TPU is not allowed'; its "
        "three commands are shown as Create starts, and `tpuwizard launch --via "
        "resize-request` makes them); such "
        "a slice is not kept: nothing would delete its MIG but tpuwizard. "
        "Optionally give a script of yours to run after the verifier, and files it writes to "
        "copy back, and Packages to add to the worker venv beside the pinned jax[tpu] "
        f"(F2 adds the course's: {' '.join(COURSE_PACKAGES)}; a {AUTO_FILE} beside the "
        "script is installed too; a package cannot change the pinned JAX). Deeper "
        "checks add the verifier's precision profile and a profiler trace (open it with "
        "TensorBoard's profile plugin, xprof or Perfetto). Prices are estimates from "
        f"approximate list prices; check the pricing page. {RESUME_HELP} F3 picks the "
        "worker's JAX from tpuwizard's table (it lists what was run with each version here, "
        "and that none was run on a TPU). F4 sets the stall guard's minutes (a worker silent "
        "and using no CPU time that long, in the verifier or your script, ends the run; 0: off) "
        "and, for a spot run that resumes on a TPU-API v2-v4 or v5e node, Google's "
        "Autocheckpoint (your script gets SIGTERM before maintenance). F6 takes the plan to GKE "
        "instead (xpk commands, a JobSet or a SkyPilot task): it only writes files."
    )

    def __init__(self, state: WizardState) -> None:
        super().__init__()
        self.state = state
        # What the session decided on the way here: the backend (auto's, and why), the
        # watchdog's check, what the route and type offer.
        self.outlook = state.looked_ahead()
        self.told_course_report = False  # the note on tpu-report.txt, said once
        self.notes = StepNotes()  # Review's notes on its fields: they go when Review does
        self.told_secrets: tuple[str, ...] = ()  # the secrets named last (said when they change)
        self.short_deep_label = False  # set as the switches are made
        self.guards = GuardsAnswer(
            state.guards.stall_minutes, state.resume.autocheckpoint is not False
        )

    def summary_text(self) -> str:
        s = self.state
        slice_ = s.slice
        size = f"{count(slice_.chips, 'chip')}, {count(slice_.vms, 'VM')}"
        # Short enough for 80x24: where the prices come from is in the help (F1).
        return (
            f"[b]About to create[/b] {s.accelerator} ({size}) in "
            f"{s.zone}, project {s.project}, route {s.route}, runtime "
            f"{slice_.generation.runtime_version}.\n{price_line(s)}"
            + (" [b]Practice: nothing is billed.[/b]" if s.practice else "")
        )

    def prices_changed(self) -> None:
        """The Billing Catalog's read landed: the zone's price is its now (or says why not)."""
        self.query_one("#summary", Static).update(self.summary_text())

    def fit_verdict(self) -> Text:
        """Whether the state fits the slice: the program's own figures where the slice was
        picked from its table, else the size's."""
        s, pick = self.state, self.state.program_pick
        if pick is not None and pick.accelerator == s.accelerator:
            verdict, fits = pick.verdict, pick.fits is not False
        else:
            state_fit = fit.fit_slice(s.state_gib, s.slice)
            verdict, fits = fit.slice_verdict(s.state_gib, state_fit), state_fit.fits_sharded
        said = Text() if fits else Text("Too small: ", style="bold")
        return said.append(verdict)  # a program's name is shown as typed, never as markup

    def compose_body(self) -> ComposeResult:
        s = self.state
        yield Static(self.summary_text(), id="summary")
        yield Static(self.fit_verdict(), id="fit-verdict")
        with Horizontal(classes="row"):
            yield _titled(
                TypedInput(value=s.name or "", placeholder="tpuwizard-<run id>", id="name"), "Name"
            )
            yield _titled(
                TypedInput(value=f"{s.deadline.max_run(s.route):g}", id="max-run"),
                "Deadline (minutes)",
            )
            yield _titled(
                TypedInput(value=typed_packages(s), placeholder="none added", id="packages"),
                "Packages (f2: course)",
            )
        with Horizontal(classes="row"):  # the switches on one row: 80x24 holds the screen
            outlook = self.outlook
            backend = outlook.made_by(Backend(s.backend))
            on_compute = backend == Backend.COMPUTE
            if both_backends(outlook):  # the watchdog is the TPU API's: it shows only there
                yield Switch(value=on_compute, id="compute")
                yield Label(compute_label(on_compute), id="compute-label", classes="switch-label")
            if outlook.watchdog_route:
                watchdog = bool(s.deadline.watchdog)
                yield Switch(value=watchdog and outlook.has_watchdog(backend), id="watchdog")
                yield Label(watchdog_label(watchdog), id="watchdog-label", classes="switch-label")
            deep_checks = s.workload.precision  # the deeper checks: precision and trace
            yield Switch(value=deep_checks, id="deep-checks")
            # Beside a third switch its words are short (F1 says what it adds): 100 columns
            # hold the row whole.
            self.short_deep_label = both_backends(outlook) and outlook.watchdog_route
            yield Label(
                deep_checks_label(deep_checks, self.short_deep_label),
                id="deep-checks-label",
                classes="switch-label",
            )
        with Horizontal(classes="row"):
            script = TypedInput(
                value=str(s.workload.script or ""), placeholder="path/to/main.py", id="script"
            )
            script.border_subtitle = "optional"
            # Short titles: beside spot's third field they still fit 80 columns whole.
            yield _titled(script, "Your script")
            yield _titled(
                # An example, not a default: left empty, nothing is copied back (said below).
                TypedInput(
                    value=",".join(s.workload.fetch), placeholder="e.g. reports/*.json", id="fetch"
                ),
                "Files to copy back",
            )
            if self.outlook.offers_resume:  # Google preempts spot TPUs: the run can come back
                yield _titled(
                    TypedInput(
                        value=s.resume.checkpoints or "",
                        placeholder=RESUME_PLACEHOLDER,
                        id="checkpoints",
                    ),
                    RESUME_TITLE,
                )
        yield Static(id="deadline-words")
        yield Static(id="error")
        # The stall guard and Autocheckpoint (F4) in the row Create's margin had, the session's
        # run folder beside them: as tall as before, so 80x24 still holds Create.
        with Horizontal(id="guards-row"):
            yield Static(id="guards")
            yield Static(f"Run folder: {shown_folder(s.run_dir)}/<run id>", id="run-folder")
        with Horizontal(classes="row"):  # the worker's JAX beside Create: 80x24 holds both
            yield Button("Create", id="create", variant="success")
            yield WorkerJax(s.workload.jax, id="worker-jax")

    ready = False  # fields post Changed while they mount; check once all of them exist

    def on_unmount(self) -> None:
        self.notes.withdraw(self.app)

    def on_mount(self) -> None:
        self.ready = True
        self.show_problems()
        self.query_one("#name", Input).focus()

    def answers(self) -> ReviewAnswer:
        """What the fields say now, as the launch's parts: each value parsed here, once."""
        name = self.query_one("#name", Input).value.strip() or None
        script = self.query_one("#script", Input).value.strip()
        max_run: float | None = deadline_typed(self.query_one("#max-run", Input).value)[0]
        fetch = tuple(
            p.strip() for p in self.query_one("#fetch", Input).value.split(",") if p.strip()
        )
        backend = self.state.backend
        if self.query("#compute"):  # as asked (auto) while it shows the session's choice
            backend = self.outlook.asked_by_switch(self.query_one("#compute", Switch).value)
        watchdog = bool(self.query("#watchdog")) and self.query_one("#watchdog", Switch).value
        watchdog = watchdog and self.outlook.has_watchdog(self.outlook.made_by(backend))
        deep_checks = self.query_one("#deep-checks", Switch).value
        folder = ""
        if self.query("#checkpoints"):
            folder = self.query_one("#checkpoints", Input).value.strip()
        return ReviewAnswer(
            name=name,
            backend=backend,
            deadline=Deadline(max_run, watchdog),
            workload=Workload(
                script=Path(script).expanduser() if script else None,
                fetch=fetch,
                packages=specs_from_field(self.query_one("#packages", Input).value),
                jax=self.query_one("#worker-jax", WorkerJax).jax,
                precision=deep_checks,
                trace=deep_checks,
            ),
            guards=Guards(stall_minutes=self.guards.stall_minutes),
            # Wanted: the plan's default (on where the node can have it); else off.
            resume=Resume(
                folder or None, autocheckpoint=None if self.guards.autocheckpoint else False
            ),
        )

    def problems(self) -> list[str]:
        """Every rule the plan would break, and the questions in the way, from the session's
        pipeline (the same stages the launch runs, calling nothing), in the wizard's words."""
        candidate = self.state.reviewed(self.answers())
        typed = deadline_typed(self.query_one("#max-run", Input).value)[1]
        return ([typed] if typed else []) + all_words(candidate.previewed().reasons, "wizard")

    @on(Input.Changed)
    @on(Switch.Changed)
    def show_problems(self) -> None:
        if not self.ready:
            return
        answers = self.answers()
        on_compute = self.outlook.made_by(Backend(answers.backend)) == Backend.COMPUTE
        if self.query("#compute-label"):
            self.query_one("#compute-label", Label).update(compute_label(on_compute))
        if self.query("#watchdog-label"):
            watchdog = bool(answers.deadline.watchdog)
            self.query_one("#watchdog-label", Label).update(watchdog_label(watchdog))
            # Compute Engine deletes the VM at its deadline itself: no watchdog to switch.
            self.query_one("#watchdog-label", Label).display = not on_compute
            self.query_one("#watchdog", Switch).display = not on_compute
        deep = deep_checks_label(answers.workload.precision, self.short_deep_label)
        self.query_one("#deep-checks-label", Label).update(deep)
        auto = self.state.reviewed(answers).package_request().auto_file
        # The file beside the script is used unasked: its field says so, on its lower border.
        self.query_one("#packages", Input).border_subtitle = f"+ {AUTO_FILE}" if auto else None
        problems = self.problems()
        candidate = self.state.reviewed(answers).preview()
        words = self.deadline_words(candidate) if not problems else ""
        if words and (on_compute or self.query("#compute")):  # which API, where there is a choice
            words = backend_words(self.state, answers, self.outlook) + "\n" + words
        # On the field's border, so that 80x24 still holds Create: what comes back, or that
        # nothing will (its grey example is not a default).
        fetch = self.query_one("#fetch", Input)
        fetch.border_subtitle = copy_back_words(answers.workload.script, answers.workload.fetch)
        note = fetch_note(answers.workload.fetch)
        if note and not self.told_course_report:
            self.told_course_report = True
            self.notes.say(self.app, note, "Files to copy back")
        self.told_secrets = show_folder(self, answers.workload.script, self.told_secrets)
        if self.query("#checkpoints"):
            self.query_one("#checkpoints", Input).border_subtitle = resume_field_words(
                answers.resume.checkpoints or "",
                candidate.resume.checkpoint_every_s,
                candidate.resume.max_restarts,
            )
        self.query_one("#deadline-words", Static).update(words)
        offered = candidate.autocheckpoint_offered  # the plan's rule, as the CLI's
        stall = self.guards.stall_minutes
        self.query_one("#guards", Static).update(
            guards_line(
                STALL_TIMEOUT_MIN if stall is None else stall,
                candidate.autocheckpoint_on if offered else None,
            )
        )
        self.query_one("#error", Static).update("\n".join(problems))
        # Words or problems, never both: an empty line would push Create off an 80x24 screen.
        self.query_one("#error", Static).display = bool(problems)
        self.query_one("#deadline-words", Static).display = bool(words)
        create = self.query_one("#create", Button)
        create.disabled = bool(problems)
        create.tooltip = problems[0] if problems else None

    def deadline_words(self, plan: LaunchPlan) -> str:
        """The deadline in words, with the check before create's answer when the watchdog is
        off: "deleted at HH:MM even if this laptop sleeps" or "only while tpuwizard runs,
        because ..." (and the command that would allow it)."""
        check = self.state.watchdog_check
        if plan.deadline_keeper.ended_by is not EndedBy.NOTHING:  # Google's, or the watchdog's
            return plan.deadline_words(time.time())
        if check is not None and check.can_arm is False:
            words = plan.deadline_words(time.time(), check.short or check.reason)
            # The grant command does not fit 80x24 beside the words: F1 shows it whole.
            return words + ("\nF1 shows the command that allows the watchdog." if check.fix else "")
        return plan.deadline_words(time.time(), "the watchdog is switched off")

    def action_course_packages(self) -> None:
        """Add the course's packages to the Packages field (those not there already)."""
        field = self.query_one("#packages", Input)
        typed = field.value.split()
        field.value = " ".join([*typed, *(p for p in COURSE_PACKAGES if p not in typed)])
        field.cursor_position = len(field.value)

    def action_worker_jax(self) -> None:
        """Pick the worker's JAX from tpuwizard's table."""
        shown = self.query_one("#worker-jax", WorkerJax)

        def picked(version: str | None) -> None:
            if version is not None:
                shown.choose(version)
                self.show_problems()

        self.app.push_screen(JaxPicker(shown.jax), picked)

    def action_guards(self) -> None:
        """The stall guard's minutes and, where the plan offers it, Autocheckpoint."""
        from tpuwizard.tui.screens.review_guards import GuardsDialog

        offered = self.state.reviewed(self.answers()).preview().autocheckpoint_offered

        def chosen(answer: GuardsAnswer | None) -> None:
            if answer is not None:
                self.guards = answer
                self.show_problems()

        self.app.push_screen(GuardsDialog(self.guards, offered), chosen)

    def action_gke_export(self) -> None:
        """The plan as reviewed so far, written for GKE (xpk, a JobSet) or SkyPilot: files only."""
        from tpuwizard.tui.screens.gke_export import GkeExportScreen

        self.app.push_screen(GkeExportScreen(self.state.reviewed(self.answers())))

    def action_help(self) -> None:
        """The help, and where the check before create said no, why and the command to allow
        the watchdog (too long for the screen at 80x24)."""
        from tpuwizard.tui.screens.help import HelpScreen

        check = self.state.watchdog_check
        text = self.HELP
        if check is not None and check.can_arm is False:
            text += f"\n\nThe watchdog cannot run: {check.reason}."
            if check.fix:
                text += f"\nTo allow it:\n{check.fix}"
        self.app.push_screen(HelpScreen(self.STEP, text))

    @on(Button.Pressed, "#create")
    def create(self) -> None:
        if self.problems():
            self.show_problems()
            return
        self.send_folder(self.answers())

    @work(exclusive=True, group="review-create")
    async def send_folder(self, answers: ReviewAnswer) -> None:
        """Create; a folder over the large mark is asked about first."""
        if await folder_agreed(host(self), answers.workload.script):
            self.dismiss(answers)


def typed_packages(state: WizardState) -> str:
    """The Packages field as it was answered: its requirements, separated by spaces."""
    return " ".join(spec.text for spec in state.workload.packages)


def both_backends(outlook: Outlook) -> bool:
    """Both APIs serve this type on this route (v5p, v6e): Review offers the choice."""
    return len(outlook.serves) == 2


def backend_words(state: WizardState, answers: ReviewAnswer, outlook: Outlook) -> str:
    """Which API creates it and why, in one line of the wizard's own words (the core's reason
    speaks of --backend, which the wizard has not): as asked (auto, the session's choice, with
    why where Compute Engine's quota decided it) or as the switch was moved."""
    if outlook.backend is None:
        return ""  # an impossible pair: the problems say why
    asked = Backend(answers.backend)
    chosen = outlook.made_by(asked)
    api = "Compute Engine" if chosen == Backend.COMPUTE else "the TPU API"
    generation = state.slice.generation.key
    if both_backends(outlook) and asked == Backend.AUTO:
        why = outlook.backend.short if outlook.by_quota else f"both APIs serve {generation}"
        return f"Made through {api} (auto: {why})."
    if both_backends(outlook):  # the switch was moved off auto's choice
        switch = "switched ON" if chosen == Backend.COMPUTE else "Compute Engine OFF"
        return f"Made through {api} ({switch}); both APIs serve {generation}."
    note = access_note(state.slice)  # TPU7x: granted through the account team
    return f"Made through {api}: Google serves {generation} only there." + (
        f" {note}." if note else ""
    )


def compute_label(on: bool) -> str:
    return f"Compute Engine {'ON' if on else 'OFF'}"


def watchdog_label(on: bool) -> str:
    # On or off in words: a switch's colour alone does not say it. What it does is said below
    # the fields, by the plan's deadline words.
    return f"Watchdog {'ON' if on else 'OFF'}"


def deep_checks_label(on: bool, short: bool = False) -> str:
    return f"Deeper checks {'ON' if on else 'OFF'}" + ("" if short else " (precision, trace)")


def price_line(s: WizardState) -> str:
    """The chosen zone's price on the route, with whose figure it is: the Billing Catalog's
    SKU (read on a date), or the offline table's, with why where the session read the
    catalog; Flex-start's "at most" only where its own price is not known."""
    price = cost.zone_price(s.slice, s.route, s.zone)
    source = f"from the {price.label}" if price.label else "an estimate from approximate prices"
    # The note's first clause: the whole reason (with its command) is under Capacity's table.
    why = f" ({price.note.split(' (')[0]})" if price.note and price.label else ""
    if price.hourly is not None:
        return f"About {money(price.hourly)}/h in this zone, {source}{why}."
    if price.at_most is not None:
        return (
            f"At most {money(price.at_most)}/h in this zone: Flex-start's own price is not "
            "published in the catalog, and Google bills it at a discount on on-demand's."
            + (f" Prices: {cost.catalog_source()}." if price.label else "")
        )
    return f"No price in the catalog for this type (see the pricing page){why}."


def _titled(widget: Input, title: str) -> Input:
    widget.border_title = title  # the label sits on the field's border: compact, and readable
    return widget


def copy_back_words(script: Path | None, fetch: Sequence[str]) -> str:
    """Before a launch: what will be copied back from the script, in a few words."""
    if script is None:
        return "nothing: there is no script" if fetch else ""
    if not fetch:
        return "nothing will be copied back"
    return "into the run folder's files/"


def shown_folder(path: Path) -> str:
    """A folder as a user reads it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
