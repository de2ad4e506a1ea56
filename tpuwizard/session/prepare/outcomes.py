"""What the pipeline before create answers, as the small values the front ends match on.

Each stage (:class:`Stage`, in its one order) goes on, refuses with its reasons
(:class:`Refusal`), or asks a question only the person can answer (:class:`Question`): the
wizard and plain mode ask it, the command line answers it with a flag or exits naming that flag.
Whatever the end, :class:`Prepared` holds what the stages decided and found on the way (the
backend and why, the preflight's lines, the watchdog's answer), for each front end to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.routes import Route

if TYPE_CHECKING:
    from tpuwizard.core.choices import Choice, Said
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.launch.plan.parts import Resume, Where
    from tpuwizard.core.preflight.quota import QuotaReading
    from tpuwizard.session.preflight import PreflightResult
    from tpuwizard.session.watchdog import WatchdogChoice


class Stage(StrEnum):
    """The stages before create, in the order they run (``tuple(Stage)``)."""

    BACKEND = "backend"  # which API creates it: asked, or auto by the support matrix
    DEFAULTS = "defaults"  # the zone, the wait for READY, up's idle deadline
    PROBLEMS = "problems"  # every rule of the plan, gcloud on PATH, the budget
    PREFLIGHT = "preflight"  # the checks before create; auto's quota reading may move it
    WATCHDOG = "watchdog"  # on, off, or a question, by the check before create
    KEEP = "keep"  # a node kept for runs needs a watchdog, or a yes


class Ask(StrEnum):
    """A question the pipeline cannot answer for the person."""

    WITHOUT_WATCHDOG = "without-watchdog"  # the watchdog asked for cannot run: go on without?
    KEEP_UNWATCHED = "keep-unwatched"  # keep a node that nothing would delete?


@dataclass(frozen=True)
class GoOn:
    """The stages run let the answers through (a preview's end: nothing waits on Create yet)."""


@dataclass(frozen=True)
class Ready:
    """Every stage let it through: the plan a launch may start from."""

    checked: CheckedPlan


@dataclass(frozen=True)
class Refusal:
    """``stage`` refuses: ``reasons`` say why and what to choose instead (a Phrase names a
    choice, in each front end's words)."""

    stage: Stage
    reasons: tuple[Said, ...]


@dataclass(frozen=True)
class Question:
    """``stage`` asks: ``why`` says what stands in the way; ``answer`` is the choice that says
    yes (go on without the watchdog): a walk's answer, or the command line's flag."""

    stage: Stage
    ask: Ask
    why: tuple[Said, ...]
    answer: Choice


Outcome = GoOn | Ready | Refusal | Question


@dataclass(frozen=True)
class Prepared:
    """The pipeline's answer for one set of answers: how it ended, and what it decided and found
    on the way (each None where no stage got that far)."""

    answers: LaunchAnswers
    outcome: Outcome
    backend: BackendChoice | None = None  # the backend decided, and why
    quota: QuotaReading | None = None  # the Compute Engine reading auto decided by, if made
    plan: LaunchPlan | None = None  # the plan as far as the stages made it
    preflight: PreflightResult | None = None
    watchdog: WatchdogChoice | None = None
    notes: tuple[str, ...] = ()  # what to know before create about how the backend treats it

    @property
    def reasons(self) -> tuple[Said, ...]:
        """What a refusal or a question says; nothing where the stages went on."""
        if isinstance(self.outcome, Refusal):
            return self.outcome.reasons
        if isinstance(self.outcome, Question):
            return self.outcome.why
        return ()

    @property
    def by_quota(self) -> bool:
        """``auto`` was decided by a Compute Engine quota reading (the reason says which way)."""
        return self.quota is not None and self.answers.where.backend == Backend.AUTO


@dataclass(frozen=True)
class Outlook:
    """What the pipeline decides of a walk's answers before its last questions (its look ahead):
    the backend (auto's quota read where it decides), the watchdog's check and default, and
    what the route and type offer. A walk hands it back to :meth:`Session.prepare` and to the
    preview, so that the quota is read once and every answer agrees."""

    route: Route
    backend: BackendChoice | None  # None: refused (``refusal`` says why)
    refusal: Refusal | None = None
    quota: QuotaReading | None = None  # the reading auto decided by
    watchdog_check: WatchdogCheck | None = None  # asked on the routes with a watchdog
    watchdog_default: bool = False  # the watchdog's switch before anyone touches it
    offers_resume: bool = False  # the route resumes a run after a preemption (checkpoints)
    serves: tuple[Backend, ...] = ()  # the backends that can make this type on this route

    @property
    def by_quota(self) -> bool:
        """Auto was decided by a Compute Engine quota reading (the reason says which way)."""
        return self.quota is not None

    def made_by(self, asked: Backend) -> Backend:
        """The backend an answer of ``asked`` makes: auto's is the one decided (the TPU API's
        where the look ahead refused, so a screen still shows one)."""
        if asked != Backend.AUTO:
            return asked
        return self.backend.backend if self.backend is not None else Backend.TPU_API

    def asked_by_switch(self, on_compute: bool) -> Backend:
        """Review's Compute Engine switch as asked: auto while it shows what auto decided, else
        the backend it was moved to."""
        if on_compute == (self.made_by(Backend.AUTO) == Backend.COMPUTE):
            return Backend.AUTO
        return Backend.COMPUTE if on_compute else Backend.TPU_API

    def serves_asked(self, asked: Backend) -> bool:
        """A backend asked (Review's switch, kept from an earlier type or route) can make this
        type on this route; auto always can."""
        return asked == Backend.AUTO or asked in self.serves

    def offers_autocheckpoint(self, where: Where, resume: Resume) -> bool:
        """Autocheckpoint is a choice for a run of ``where`` with ``resume`` on the backend
        decided: the plan's rule (``LaunchPlan.autocheckpoint_offered``), asked before the plan
        is made."""
        from dataclasses import replace

        from tpuwizard.core.launch.plan.launch_plan import autocheckpoint_offered

        if self.backend is None:
            return False
        return autocheckpoint_offered(replace(where, backend=self.backend.backend), resume)

    def has_watchdog(self, backend: Backend | None = None) -> bool:
        """The route has an on-VM watchdog on ``backend`` (None: the one decided); where Google
        keeps the deadline (Flex-start, Compute Engine) there is none to switch."""
        from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
        from tpuwizard.core.launch.plan.route_offers import WATCHDOG_ROUTES

        if backend is None:
            backend = self.backend.backend if self.backend is not None else Backend.TPU_API
        return self.route in WATCHDOG_ROUTES and DeadlineKeeper(self.route, backend).googles is None

    @property
    def asks_watchdog(self) -> bool:
        """The decided backend and the route have a watchdog to ask about."""
        return self.has_watchdog()

    @property
    def watchdog_route(self) -> bool:
        """The route has a watchdog on the TPU API (the wizard's switch, hidden on Compute
        Engine)."""
        return self.has_watchdog(Backend.TPU_API)
