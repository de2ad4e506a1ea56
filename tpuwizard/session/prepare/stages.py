"""The rules before create, as the pipeline's stages (:class:`Stage`, in that order): each
reads what the stages before it decided, and goes on, refuses or asks.

No front end imports this module (an import-linter contract in pyproject.toml says so): which
backend, which defaults, gcloud on PATH, the watchdog's and the keep's rules are decided here,
once, for the command line, plain mode and the wizard alike. A :class:`Pipeline` without a
session (Review's preview) calls nothing: it decides from what a look ahead found.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud.backends import BACKENDS, COMPUTE, Backend, Transport
from tpuwizard.core.deadlines import READY_TIMEOUT_S
from tpuwizard.core.errors import BadInput, PlanRefused
from tpuwizard.core.launch.plan.deadline_keeper import DeadlineKeeper
from tpuwizard.session.prepare.outcomes import (
    Ask,
    GoOn,
    Outcome,
    Outlook,
    Question,
    Refusal,
    Stage,
)

if TYPE_CHECKING:
    from tpuwizard.core.cloud.backend_choice import BackendChoice
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.checked import CheckedPlan
    from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
    from tpuwizard.core.preflight.quota import QuotaReading
    from tpuwizard.session.preflight import PreflightResult
    from tpuwizard.session.services import PreparesLaunches
    from tpuwizard.session.watchdog import WatchdogChoice


class Priced(Protocol):
    """A command's prices beside its launch (session/prices.py's PricesBeside)."""

    def start(self) -> object: ...

    def wait(self, wait_s: float) -> None: ...


UP_IDLE_MINUTES = 30.0  # a node kept for runs deletes itself after this long idle, unless told
GO = GoOn()
WATCHDOG_OFF = Choice("watchdog", "off")


def check_transport(transport: Transport, practice: bool) -> None:
    """``--transport gcloud`` runs the gcloud CLI to reach every worker, so without it on PATH
    the launch would fail only once the TPU exists and bills: BadInput before create."""
    if transport == Transport.GCLOUD and not practice and shutil.which("gcloud") is None:
        raise BadInput(
            "--transport gcloud needs the gcloud CLI, and none is on PATH: install the Google "
            "Cloud CLI (https://cloud.google.com/sdk/docs/install), or use --transport ssh."
        )


def compute_ok(answers: LaunchAnswers) -> bool:
    """May ``auto`` take Compute Engine for these answers: nothing asked needs the TPU API
    (gcloud's SSH reaches TPU API nodes only; an on-VM watchdog or an idle deadline asked for
    are the TPU API's)."""
    return (
        answers.reach.transport != Transport.GCLOUD
        and answers.deadline.watchdog is not True
        and answers.deadline.idle_minutes is None
    )


def serving(answers: LaunchAnswers) -> tuple[Backend, ...]:
    """The backends that can make the answers' type on their route (the wizard's switch shows
    where there are two)."""
    from tpuwizard.session.backend import decide_backend

    served = []
    for backend in BACKENDS:
        try:
            decide_backend(answers.where.slice, answers.where.route, backend)
        except BadInput:
            continue
        served.append(backend)
    return tuple(served)


@dataclass(frozen=True)
class KnownCheck:
    """The check before create as a look ahead found it: answered without a call (a preview)."""

    check: WatchdogCheck | None

    def watchdog_check(self, service_account: str | None = None) -> WatchdogCheck:
        from tpuwizard.core.cloud.iam import WatchdogCheck

        if self.check is not None:
            return self.check
        return WatchdogCheck(
            None,
            "the check before create is asked at Create",
            service_account or "the project's default compute account",
        )


def _read_quota(session: PreparesLaunches, plan: LaunchPlan, at_once: int) -> QuotaReading | None:
    """Compute Engine's quota for ``plan``; None where it could not be read at all (auto keeps
    the TPU API then, and the checks say why)."""
    from tpuwizard.session.preflight import compute_quota

    try:
        return compute_quota(session, plan.slice, plan.zone, plan.route, at_once)
    except BadInput:
        raise
    except Exception:
        return None


def _said(err: BadInput) -> tuple[Said, ...]:
    return tuple(err.problems) if isinstance(err, PlanRefused) else (str(err),)


@dataclass
class Pipeline:
    """One run of the stages over ``answers``: what each decided, as it goes. ``session`` None:
    a preview, which makes no call (``known``: what a look ahead found stands in)."""

    answers: LaunchAnswers
    # The run's id and folder; a preview's plan is never launched (only prepare makes a
    # CheckedPlan), so it names a stand-in run, "preview", and nothing is written there.
    run: tuple[str, Path]
    project: str  # the session's, where the answers name none
    practice: bool
    session: PreparesLaunches | None = None
    preflight_on: bool = True  # --no-preflight: no checks, and no quota read for auto
    prices: Priced | None = None  # the command's prices, started once the rules pass
    known: Outlook | None = None
    choice: BackendChoice | None = None
    pending: bool = False  # auto waits on Compute Engine's quota reading (the preflight's)
    quota: QuotaReading | None = None
    plan: LaunchPlan | None = None
    ready_timeout: float = READY_TIMEOUT_S
    takes_zones: bool = True  # the command has --zones (preflight has not): its refusal names it
    result: PreflightResult | None = None
    watchdog_choice: WatchdogChoice | None = None
    readied: bool = False
    package_note: str | None = None  # the package check could not run: why

    def run_stages(self, stages: tuple[Stage, ...] = tuple(Stage)) -> Outcome:
        """Each stage in turn, to the first that does not go on."""
        steps: dict[Stage, Callable[[], Outcome]] = {
            Stage.BACKEND: self.stage_backend,
            Stage.DEFAULTS: self.stage_defaults,
            Stage.PROBLEMS: self.stage_problems,
            Stage.PREFLIGHT: self.stage_preflight,
            Stage.WATCHDOG: self.stage_watchdog,
            Stage.KEEP: self.stage_keep,
        }
        for stage in stages:
            outcome = steps[stage]()
            if not isinstance(outcome, GoOn):
                return outcome
        return GO

    def _calls(self) -> PreparesLaunches:
        """The session, for a stage that calls the cloud. A kept node outlives this process:
        before the first call, so must the practice sandbox that will hold it."""
        assert self.session is not None, "a preview calls nothing"
        if self.answers.deadline.keep and not self.readied:
            self.session.prepare_to_keep()
            self.readied = True
        return self.session

    # -- the stages, in order ---------------------------------------------------------------
    def stage_backend(self) -> Outcome:
        """The backend asked, or auto's by the support matrix; an impossible pair refused.
        Auto for a type both serve waits on Compute Engine's quota (the preflight reads it)."""
        from tpuwizard.core.launch.plan.via_rules import refuse_early
        from tpuwizard.session.backend import decide_backend
        from tpuwizard.session.preflight import quota_decides

        a = self.answers
        try:
            refuse_early(a.where)  # the course's words
            self.choice = decide_backend(a.where.slice, a.where.route, a.where.backend)
        except BadInput as err:
            return Refusal(Stage.BACKEND, _said(err))
        # A walk's look ahead read the quota before its last questions: its reading stands,
        # whatever was answered after it (the watchdog is asked only where the TPU API stays).
        read_ahead = self.known is not None and self.known.quota is not None
        ok = compute_ok(a) or read_ahead
        self.pending = quota_decides(a.where.slice, a.where.backend, self.choice, ok)
        return GO

    def stage_defaults(self) -> Outcome:
        """The zone (gcloud's where none is given), the wait for READY, and for a node kept for
        runs its watchdog on and its idle deadline, where its backend has a watchdog."""
        from tpuwizard.core.cloud import gcloud_config
        from tpuwizard.core.launch.plan.launch_plan import plan_for_run, ready_timeout_s

        a, where = self.answers, self.answers.where
        assert self.choice is not None
        zone = (
            where.zone or (where.zones[0] if where.zones else "") or gcloud_config.discover().zone
        )
        if not zone:
            return Refusal(
                Stage.DEFAULTS,
                (
                    f"No zone: give --zone{' or --zones' if self.takes_zones else ''} "
                    f"(tpuwizard zones --accelerator {where.slice.name} lists them) or run "
                    "`gcloud config set compute/zone ZONE`.",
                ),
            )
        asked_end = a.deadline
        watchdog = asked_end.watchdog
        if watchdog is None:  # decided by the check (the watchdog stage); kept for runs: on
            googles = DeadlineKeeper(where.route, self.choice.backend).googles
            watchdog = asked_end.iterate and googles is None
        idle = asked_end.idle_minutes
        if idle is None and asked_end.iterate and watchdog:
            idle = UP_IDLE_MINUTES
        decided = dataclasses.replace(
            where,
            zone=zone,
            project=where.project or self.project,
            failover=where.failover or bool(where.zones),
        )
        filled = dataclasses.replace(
            a,
            where=decided,
            deadline=dataclasses.replace(asked_end, watchdog=watchdog, idle_minutes=idle),
        )
        run_id, run_dir = self.run
        self.plan = plan_for_run(run_id, run_dir, filled, self.choice.backend)
        asked = asked_end.ready_timeout_s
        self.ready_timeout = asked if asked is not None else ready_timeout_s(where.route)
        return GO

    def stage_problems(self) -> Outcome:
        """Every rule of the plan, and gcloud on PATH where its SSH is asked for: before any
        call. Then the command's prices; a --budget is held at the catalog's figure."""
        from tpuwizard.core.prices.reader import READ_TIMEOUT

        assert self.plan is not None
        found: list[Said] = []
        try:
            check_transport(self.answers.reach.transport, self.practice)
        except BadInput as err:
            found.append(str(err))
        found += self.plan.problems()
        if found:
            return Refusal(Stage.PROBLEMS, tuple(found))
        if self.session is not None and (refused := self._check_packages()):
            return Refusal(Stage.PROBLEMS, refused)
        if self.prices is not None:
            if self.session is not None:
                # The price read is the first call: a kept node's practice sandbox starts
                # before it, so the node lives in the one that outlives this command.
                self._calls()
            # The cached read's prices, or the offline table's (labelled), from the first line.
            self.prices.start()
            if self.answers.resume.budget_usd is not None:
                self.prices.wait(READ_TIMEOUT)  # a saved read set aside (or old) is read first
                if found := self.plan.problems():
                    return Refusal(Stage.PROBLEMS, tuple(found))
        return GO

    def _check_packages(self) -> tuple[Said, ...]:
        """The added packages resolved for the worker before create (none: nothing is run);
        why they are refused, else nothing (a check that could not run is a note)."""
        from tpuwizard.session.package_check import (
            check_plan_packages,
            package_note,
            package_refusal,
        )

        assert self.plan is not None
        if not self.plan.workload.packages:
            return ()
        found = check_plan_packages(self.plan.workload, self.practice)
        specs = [spec.text for spec in self.plan.workload.packages]
        refusal = package_refusal(found, specs)
        if refusal is None and (note := package_note(found, specs)):
            self.package_note = note
        return (refusal,) if refusal is not None else ()

    def stage_preflight(self) -> Outcome:
        """The checks before create; auto's Compute Engine quota reading decides it first (it
        is the quota line then), and may move the plan there. A FAIL refuses."""
        from tpuwizard.core.preflight.ask import PreflightAsk
        from tpuwizard.session.preflight import (
            PreflightResult,
            checks,
            fan_out_in_region,
            logs_in,
        )

        reading = self.known.quota if self.known is not None else None
        if self.session is None or not self.preflight_on:  # a preview, or --no-preflight
            return self._by_quota(reading) if self.pending and reading is not None else GO
        session, plan = self._calls(), self.plan
        assert plan is not None
        at_once = fan_out_in_region(plan)
        if self.pending:
            reading = reading or _read_quota(session, plan, at_once)
            if reading is not None and (moved := self._by_quota(reading, at_once)) is not GO:
                return moved
            plan = self.plan
            assert plan is not None
        made = self.quota.check if self.quota is not None and plan.backend == COMPUTE else None
        ask = PreflightAsk(
            plan.project,
            plan.accelerator,
            plan.zone,
            plan.route,
            plan.backend,
            plan.reach.internal_ips,
            plan.reach.transport,
            at_once,
            logs_in(session),
        )
        self.result = PreflightResult(self.choice, checks(session, ask, made))
        if self.result.failures:
            return Refusal(Stage.PREFLIGHT, tuple(c.line() for c in self.result.failures))
        return GO

    def _by_quota(self, reading: QuotaReading, at_once: int = 1) -> Outcome:
        """Auto decided by ``reading``; the plan moved where it says (the one move), and its
        rules asked again there."""
        from tpuwizard.core.launch.plan.on_backend import on_backend
        from tpuwizard.session.preflight import by_quota

        plan = self.plan
        assert plan is not None
        self.quota, self.pending = reading, False
        self.choice = by_quota(self.answers.where.slice, plan.zone, plan.route, reading, at_once)
        self.plan = on_backend(plan, self.choice.backend)
        if self.plan is not plan and (found := self.plan.problems()):
            return Refusal(Stage.PREFLIGHT, tuple(found))
        return GO

    def stage_watchdog(self) -> Outcome:
        """On, off or a question, by the check before create (session/watchdog.py's rule): the
        watchdog asked for that cannot run is a question, never a node nothing deletes."""
        from tpuwizard.core.launch.plan.launch_plan import attach_problems
        from tpuwizard.session.watchdog import choose_watchdog

        a, plan = self.answers, self.plan
        assert plan is not None
        known = self.known.watchdog_check if self.known is not None else None
        asks = self._calls() if self.session is not None else KnownCheck(known)
        try:
            self.watchdog_choice = choose_watchdog(
                asks, plan, a.deadline.watchdog, a.deadline.iterate, known
            )
        except PlanRefused as err:
            check = asks.watchdog_check(plan.reach.service_account)
            off = dataclasses.replace(
                plan, deadline=dataclasses.replace(plan.deadline, watchdog=False)
            )
            if plan.deadline_keeper.googles is None and not (
                off.problems() or attach_problems(off, check)
            ):
                return Question(Stage.WATCHDOG, Ask.WITHOUT_WATCHDOG, _said(err), WATCHDOG_OFF)
            return Refusal(Stage.WATCHDOG, _said(err))
        except BadInput:  # asked on, and the check says the watchdog cannot run
            check = asks.watchdog_check(plan.reach.service_account)
            fix = f", or allow it: {check.fix}" if check.fix else ""
            why = phrase(
                f"The watchdog cannot run: {check.reason}. Go on without it ({{0}}){fix}",
                WATCHDOG_OFF,
            )
            return Question(Stage.WATCHDOG, Ask.WITHOUT_WATCHDOG, (why,), WATCHDOG_OFF)
        self.plan = self.watchdog_choice.plan
        return GO

    def stage_keep(self) -> Outcome:
        """A node kept for runs (``up``) whose watchdog cannot be armed would bill until someone
        deletes it: a question. A name kept before has its deleted node's record closed."""
        a, plan, choice = self.answers, self.plan, self.watchdog_choice
        assert plan is not None
        check = choice.check if choice is not None else None
        if a.deadline.iterate and plan.watchdog and check is not None and check.can_arm is False:
            why: tuple[Said, ...] = (
                f"Refusing to keep a node that nothing would delete: {check.reason}.",
            )
            if check.fix:
                why += (f"To allow the watchdog: {check.fix}",)
            return Question(Stage.KEEP, Ask.KEEP_UNWATCHED, why, WATCHDOG_OFF)
        if a.deadline.keep and self.session is not None:
            self._calls().kept.settle(plan.node_name)
        return GO

    # -- what the stages made ---------------------------------------------------------------
    def checked(self) -> CheckedPlan:
        """Every stage went on: the plan a launch may start from, with what was found."""
        from tpuwizard.core.launch.plan.checked import CheckedPlan
        from tpuwizard.session.preflight import fan_out_in_region

        plan, choice, result = self.plan, self.choice, self.result
        assert plan is not None and choice is not None
        quota_read = result is not None and result.quota_read
        login_key = result is not None and result.imports_login_key
        # All of them only where every zone is in the one region the reading was for.
        one_region = fan_out_in_region(plan) == len(plan.where.zones)
        fan_out_checked = plan.where.fan_out and quota_read and one_region
        check = self.watchdog_choice.check if self.watchdog_choice is not None else None
        return CheckedPlan(
            self.answers, plan, choice, self.ready_timeout, check, login_key, fan_out_checked
        )

    def notes(self) -> tuple[str, ...]:
        """What to know before create about how the backend treats the plan."""
        from tpuwizard.session.backend import backend_notes

        if self.plan is None:
            return ()
        notes = backend_notes(self.plan, nat_checked=self.result is not None)
        return (*notes, *([self.package_note] if self.package_note else []))
