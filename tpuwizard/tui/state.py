"""The wizard's state: one dataclass, owned by the App, read by every screen, into which the App
folds the answers the steps are dismissed with (tui/answers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.core import paths
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Resume, Workload
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    # Imported where used, after the first screen (see WizardApp): both take long to import.
    from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.launch.plan.packages import PackageRequest
    from tpuwizard.core.plan.catalog import Slice
    from tpuwizard.session.prepare.outcomes import Outlook, Prepared
    from tpuwizard.tui.answers import ProgramPick, ReviewAnswer


FREE_NOTEBOOK = "notebook"  # the first step's card of the free notebooks (core/plan/routes.py)


@dataclass
class WizardState:
    """What the user has chosen so far and what the launch has reported back."""

    # The route's card chosen on the first step: a TPU route, or the free notebook's card,
    # which walks its own steps (tui/free_route.py) and leaves ``route`` as it was.
    route: Route = Route.VM
    free_notebook: bool = False
    route_answers: dict[str, object] = field(default_factory=dict)  # budget, chips, length...
    practice: bool = False
    project: str | None = None
    zone: str | None = None
    account: str | None = None
    credentials: str | None = None
    state_gib: float = 48.0
    # The slice picked from "From my program"'s table: Review says the program's figures on it,
    # not the size box's; None once a size is chosen instead.
    program_pick: ProgramPick | None = None
    params: str = ""  # a parameter count typed instead of a size ("7B"), with its recipe
    recipe: str = "bf16-adam"
    accelerator: str = ""  # empty until chosen: capacity preselects the cheapest that fits
    # The check before create, asked once on the way to Review; the switch starts at its
    # answer. The key says which project and route it was asked for.
    watchdog_check: WatchdogCheck | None = None
    watchdog_checked_for: tuple[str, str] | None = None
    # What the session's pipeline decided of these answers on the way to Review: the backend,
    # with auto's quota reading, and the watchdog's check.
    outlook: Outlook | None = None
    # Review's answers (tui/answers.py ReviewAnswer), as the launch's parts: the node's name
    # and the API asked for (the rest of Where is the other steps'), and the parts whole.
    name: str | None = None
    backend: Backend = Backend.AUTO  # as asked; the look ahead (outlook) says which it is and why
    deadline: Deadline = field(default_factory=lambda: Deadline(watchdog=False))
    # The script is Review's (optional, run after the verifier); its packages the Packages
    # field's alone: a requirements.txt beside the script is added when the plan is asked for.
    workload: Workload = field(default_factory=Workload)
    guards: Guards = field(default_factory=Guards)  # F4's stall guard (None: its default; 0: off)
    # Resume after preemption: the checkpoints folder as typed (kept for going back on a route
    # that offers none), and Autocheckpoint (None: on where the node can have it; F4's).
    resume: Resume = field(default_factory=Resume)
    # The free route's script (the Notebook step's, run on Kaggle or Colab): its own, so a
    # script given there never fills Review's optional field for a TPU launch.
    notebook_script: Path | None = None
    run_dir: Path = field(default_factory=paths.runs_folder)  # the session's (runs_base)
    total_cost_usd: float | None = None
    receipt_path: str | None = None
    receipt_ok: bool | None = None
    last_failure: Diagnosis | None = None
    finished_code: int | None = None
    kept: ev.Kept | None = None
    # The launch's node and, once its watchdog is armed, when that deletes it (the quit guard
    # says so, as the parting line does).
    launching: str | None = None
    watchdog_deadline: float | None = None
    _parsed: tuple[str, Slice] | None = field(default=None, repr=False, compare=False)

    @property
    def slice(self) -> Slice:
        """The accelerator chosen (Capacity's answer), parsed once per answer: what Review, Zones
        and the GKE export read. Raises UnknownAcceleratorError for a name the catalog does
        not know."""
        if self._parsed is None or self._parsed[0] != self.accelerator:
            from tpuwizard.core.plan import catalog

            self._parsed = (self.accelerator, catalog.parse_accelerator(self.accelerator))
        return self._parsed[1]

    @property
    def route_card(self) -> str:
        """The first step's card chosen: the route's, or the free notebook's."""
        return FREE_NOTEBOOK if self.free_notebook else self.route.value

    def choose_route(self, card: str) -> None:
        """A card chosen on the first step, parsed here: a TPU route, or the free notebook's. A
        deadline typed for another card does not carry over: Review opens with this route's own
        default (Flex-start's 240, not spot's 120)."""
        if card != self.route_card:
            self.deadline = replace(self.deadline, max_run_minutes=None)
        self.free_notebook = card == FREE_NOTEBOOK
        if not self.free_notebook:
            self.route = Route(card)

    def notebook_default(self) -> Path | None:
        """What the Notebook step's script field starts with: its own last script, else the
        one given on Review (the same program, most likely)."""
        return self.notebook_script or self.workload.script

    def take_notebook(self, script: Path) -> None:
        """The script the Notebook step runs on Kaggle or Colab; Review's field is not its."""
        self.notebook_script = script

    def take_review(self, answer: ReviewAnswer) -> None:
        self.name, self.backend = answer.name, answer.backend
        self.deadline, self.workload = answer.deadline, answer.workload
        self.guards, self.resume = answer.guards, answer.resume

    def reviewed(self, answer: ReviewAnswer) -> WizardState:
        """A copy with Review's answers taken: what Create would launch."""
        copy = replace(self)
        copy.take_review(answer)
        return copy

    def apply(self, event: ev.Event) -> None:
        """Fold a lifecycle event into what the screens show (billing lives in the core)."""
        from tpuwizard.core.launch.events import launch_events as ev

        match event:
            case ev.Planned():
                self.zone, self.launching, self.watchdog_deadline = event.zone, event.name, None
            case ev.Watchdog():
                self.watchdog_deadline = event.deadline if event.armed else None
            case ev.ZoneFailover():
                self.zone = event.to_zone
            case ev.ReceiptSaved():
                self.receipt_path, self.receipt_ok = event.path, event.ok
            case ev.TeardownVerified():
                self.total_cost_usd = event.cost_usd
            case ev.Kept():
                self.kept = event
            case ev.Failed():
                self.last_failure = event.diagnosis
            case ev.Finished():
                self.finished_code = event.exit_code
                if self.total_cost_usd is None:
                    self.total_cost_usd = event.cost_usd

    def preview(self) -> LaunchPlan:
        """The launch plan these answers describe, for Review: the session's pipeline run
        without a call (:meth:`previewed`); the launch's own comes from ``Session.prepare``."""
        plan = self.previewed().plan
        assert plan is not None, "a preview makes its plan whatever the stages say"
        return plan

    def previewed(self) -> Prepared:
        """Every stage of the session's pipeline over these answers, calling nothing: what the
        look ahead before Review found stands in (its quota reading, its watchdog check). Its
        reasons say what stands in the way."""
        from tpuwizard.session.prepare.pipeline import preview

        return preview(self.plan_answers(), self.looked_ahead(), self.run_dir, self.practice)

    def looked_ahead(self, answers: LaunchAnswers | None = None) -> Outlook:
        """The session's look ahead before Review (``outlook``); else one made here without a
        call, from the check this state holds (a screen shown on its own)."""
        if self.outlook is not None:
            return self.outlook
        from tpuwizard.session.prepare.pipeline import look_ahead

        return look_ahead(answers or self.plan_answers(), None, self.watchdog_check)

    def plan_answers(self) -> LaunchAnswers:
        """What these answers ask for one launch (the session mints the run and adds what the
        pipeline found: Session.prepare): Review's parts as they are, the packages of a
        requirements.txt beside the script added, and the checkpoints folder where the route
        offers resume."""
        from tpuwizard.core.launch.plan.answers import LaunchAnswers
        from tpuwizard.core.launch.plan.parts import Where

        answers = LaunchAnswers(
            where=Where(
                self.slice,  # Capacity's answer, parsed once per answer
                self.zone or "",
                self.project or "",
                self.route,
                self.backend,
                self.name,
            ),
            workload=replace(self.workload, packages=self.package_request().specs),
            deadline=self.deadline,
            guards=self.guards,
            resume=replace(self.resume, checkpoints=None),
        )
        # Offered on the routes Google preempts; a folder typed there stays for going back.
        if self.resume.checkpoints and self.looked_ahead(answers).offers_resume:
            answers = replace(answers, resume=self.resume)
        return answers

    def package_request(self) -> PackageRequest:
        """The Packages field's requirements, then those of a requirements.txt beside the
        script (the request says when that file is used)."""
        from tpuwizard.core.errors import BadInput
        from tpuwizard.core.launch.plan.packages import (
            PackageRequest,
            PackageSpec,
            gather_packages,
        )

        typed, script = self.workload.packages, self.workload.script
        try:
            found = gather_packages((), (), script)
        except BadInput as err:  # an unreadable file beside the script: a problem, said
            unread = PackageSpec("", "requirements.txt beside the script", str(err))
            return PackageRequest((*typed, unread))
        return PackageRequest((*typed, *found.specs), found.auto_file)
