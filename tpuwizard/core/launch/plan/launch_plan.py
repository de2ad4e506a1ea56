"""LaunchPlan: what one launch will do, and every rule it must satisfy before any cloud call."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.core import paths
from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud import gcloud_config, google_errors
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.deadlines import READY_TIMEOUT_S, EndedBy
from tpuwizard.core.errors import BadInput, PlanRefused
from tpuwizard.core.launch.plan.backend_rules import backend_problems
from tpuwizard.core.launch.plan.deadline_keeper import FLEX_START, DeadlineKeeper
from tpuwizard.core.launch.plan.deadline_rules import deadline_problems, watchdog_problems
from tpuwizard.core.launch.plan.guard_rules import guard_problems
from tpuwizard.core.launch.plan.parts import (
    DEFAULT_MAX_RUN,
    Deadline,
    Guards,
    Reach,
    Resume,
    Where,
    Workload,
)
from tpuwizard.core.launch.plan.reach_rules import account_problems, reach_problems
from tpuwizard.core.launch.plan.resume_rules import resume_problems
from tpuwizard.core.launch.plan.via_rules import via_problems
from tpuwizard.core.launch.plan.workload_rules import workload_problems
from tpuwizard.core.launch.plan.zone_rules import zones_problems
from tpuwizard.core.plan import catalog
from tpuwizard.core.routes import CLOUD_ROUTES, Route

# The generations Google's Autocheckpoint (Preview) serves, on the TPU API only.
AUTOCHECKPOINT_GENERATIONS = ("v2", "v3", "v4", "v5e")


def autocheckpoint_serves(known: catalog.Slice | None, backend: Backend) -> bool:
    """Can a node of ``known`` made through ``backend`` have Autocheckpoint: a TPU-API node of
    v2, v3, v4 or v5e (Google's autocheckpoint page: "Only TPUs (v2-v4, and v5e) created through
    the Cloud TPU API"). The one rule: the plan's, and what the wizard and plain mode offer."""
    return (
        backend == Backend.TPU_API
        and known is not None
        and known.generation.key in AUTOCHECKPOINT_GENERATIONS
    )


def autocheckpoint_offered(where: Where, resume: Resume) -> bool:
    """Is Autocheckpoint a choice for a run: it has --checkpoints and its node (``where``, on
    the backend decided) can have it. What the wizard and plain mode offer, and the plan's."""
    return resume.checkpoints is not None and autocheckpoint_serves(where.slice, where.backend)


if TYPE_CHECKING:
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.answers import LaunchAnswers

ROUTES = CLOUD_ROUTES  # the routes a plan makes a node on
# A service account's email: what Google accepts in Node.serviceAccount.email.


def ready_timeout_s(route: str) -> float:
    """The wait for READY a route gets unless the user says otherwise (--ready-timeout): the
    same on every route, READY_TIMEOUT_S (core/deadlines.py, its one place). A spot
    request's wait is sent as its queueingPolicy.validUntilDuration, so Google ends it too;
    Flex-start's wait for capacity is apart (--queue-wait, plan/backend_rules.py): for it this
    is the wait once capacity is granted."""
    return READY_TIMEOUT_S


@dataclass(frozen=True)
class LaunchPlan:
    # Where and what the node is (parts.py), its backend decided (never ``auto``): the slice
    # was parsed where the name was read, so a plan never holds a name that is no TPU type.
    where: Where
    run_id: str
    run_dir: Path
    # What runs on the workers: the script, its arguments and files, the venv (parts.py).
    workload: Workload = field(default_factory=Workload)
    # When and how the node ends, as decided: its watchdog on or off (parts.py, deadline_rules.py).
    deadline: Deadline = field(default_factory=lambda: Deadline(watchdog=False))
    # How the workers are reached and the node's service account (parts.py, reach_rules.py).
    reach: Reach = field(default_factory=Reach)
    # --checkpoints DIR and the rest of a run that resumes after a preemption, Autocheckpoint
    # with it (parts.py; plan/resume_rules.py, resume/chain.py).
    resume: Resume = field(default_factory=Resume)
    # --stall-timeout, --join-timeout, --heartbeat-timeout: the workers' guards (parts.py).
    guards: Guards = field(default_factory=Guards)

    @property
    def accelerator(self) -> str:
        """The slice's name, as the words and the clouds say it."""
        return self.where.slice.name

    @property
    def slice(self) -> catalog.Slice:
        """The slice this plan makes."""
        return self.where.slice

    @property
    def zone(self) -> str:
        """The zone the node is made in (with --zones, the first tried)."""
        return self.where.zone

    @property
    def project(self) -> str:
        return self.where.project

    @property
    def route(self) -> Route:
        return self.where.route

    @property
    def backend(self) -> Backend:
        """The API that makes the node, decided before the plan was made."""
        return self.where.backend

    @property
    def autocheckpoint_can(self) -> bool:
        """Can the node have Autocheckpoint (:func:`autocheckpoint_serves`)."""
        return autocheckpoint_serves(self.slice, self.backend)

    @property
    def autocheckpoint_offered(self) -> bool:
        """Is Autocheckpoint a choice for this run: it has --checkpoints and its node can have
        it (what the wizard and plain mode offer; on unless turned off)."""
        return autocheckpoint_offered(self.where, self.resume)

    @property
    def autocheckpoint_on(self) -> bool:
        """Is the node created with Autocheckpoint: by default wherever a run has --checkpoints
        and the node can have it (a script that saves on SIGTERM loses nothing to maintenance);
        --no-autocheckpoint turns it off, --autocheckpoint where it cannot be is refused."""
        return self.resume.autocheckpoint is not False and self.autocheckpoint_offered

    @property
    def course_route_2b(self) -> bool:
        """Flex-start on Compute Engine: the course's Route 2B (three gcloud commands), which a
        walk shows as Create starts."""
        return self.backend == Backend.COMPUTE and self.route == Route.FLEX

    @property
    def node_name(self) -> str:
        return self.where.name or f"tpuwizard-{self.run_id}"

    @property
    def watchdog(self) -> bool:
        """Is the on-VM watchdog on (as decided: the deadline part's, read in many places)."""
        return bool(self.deadline.watchdog)

    @property
    def keep(self) -> bool:
        """Is the node kept after the run (``launch --keep``, ``up``): the deadline part's."""
        return self.deadline.keep

    @property
    def attaches_account(self) -> bool:
        """The create attaches a service account: the watchdog's scope, or a named account."""
        return self.watchdog or self.reach.service_account is not None

    @property
    def max_run(self) -> float:
        """Minutes the node may run: ``--max-run``, else the route's default (the Deadline
        part's rule); a plan's route makes a node, so it has one."""
        minutes = self.deadline.max_run(self.route)
        if minutes is None:
            raise KeyError(f"no deadline on the {self.route} route")
        return minutes

    @property
    def max_run_s(self) -> int:
        """The same deadline in whole seconds, as the clouds are sent it and timers count it."""
        return int(self.max_run * 60)

    @property
    def deadline_keeper(self) -> DeadlineKeeper:
        """Who ends the node at its deadline, Google or the watchdog, and how."""
        return DeadlineKeeper(self.route, self.backend, self.watchdog)

    @property
    def _multi_host(self) -> bool:
        return not self.slice.single_host

    def deadline_words(self, now: float, why_no_watchdog: str | None = None) -> str:
        """What the deadline really does for this plan, in words (the clock is local time).

        ``why_no_watchdog``: the check before create's reason, said when the watchdog is off."""
        minutes = self.max_run
        at = time.strftime("%H:%M", time.localtime(now + minutes * 60))
        keeper = self.deadline_keeper
        if keeper.by_max_run_duration and self._multi_host:
            # Each VM's max run duration ends it at the deadline, but its MIG may make it again
            # (compute-engine.md): Google's deadline is not the slice's, tpuwizard's teardown is.
            return (
                f"Not Google's deadline: each VM's max run duration ends it at {at}, but the MIG "
                "may recreate it; tpuwizard deletes the whole slice when the run ends, only "
                "while tpuwizard runs."
            )
        if keeper.by_max_run_duration:
            return (
                f"Google deletes it at {at} (Compute Engine's max run duration), even if this "
                "laptop sleeps."
            )
        if keeper.googles == FLEX_START:
            return (
                f"Google ends it at {at} (Flex-start's run duration), even if this laptop sleeps."
            )
        if keeper.ended_by is EndedBy.WATCHDOG:
            return (
                f"Once created, the TPU is deleted at {at} (its deadline) even if this laptop "
                "sleeps: a watchdog on the VM sees to it."
            )
        if why_no_watchdog:  # short enough for two lines of an 80x24 screen
            return (
                f"No watchdog: deleted only while tpuwizard runs, because {why_no_watchdog}; "
                f"if this laptop sleeps, it bills past {at}."
            )
        return (
            f"No watchdog: nothing deletes it at {at}. tpuwizard deletes it when the run ends, "
            "but only while tpuwizard runs; if this laptop sleeps, it keeps billing."
        )

    def problems(self) -> list[Said]:
        """Every rule the plan breaks, as messages that say what to type instead.

        Front ends call this as the user types (Create stays disabled while it is not empty);
        the launch calls it before any cloud call. An empty list means the plan may run.
        """
        found: list[Said] = []

        def check(rule: Callable[[], object]) -> None:
            try:
                rule()
            except BadInput as err:
                found.append(str(err))

        # TPU7x on the TPU API: backend_problems says so, with what to type instead.
        refusal = google_errors.launchable(self.slice, self.backend)
        check(lambda: gcloud_config.validate_zone(self.zone))
        check(lambda: gcloud_config.validate_project(self.project))
        check(lambda: gcloud_config.validate_node_name(self.node_name))
        if self.route not in ROUTES:
            found.append(f"Unknown route '{self.route}'. Choose one of: {', '.join(ROUTES)}.")
        if len(self.node_name) > 60 and self.route != Route.VM:
            found.append(
                "Names for spot and flex routes must be at most 60 characters "
                "(the queued resource adds '-qr')."
            )
        if self.route == Route.FLEX and not refusal:
            found.extend(flex_problems(self.slice, self.zone, self.backend))
        found.extend(
            backend_problems(
                self.where,
                self.keep,
                self.max_run,
                self.deadline.queue_wait_minutes,
                self.watchdog,
            )
        )
        found.extend(guard_problems(self.guards))
        if self.resume.autocheckpoint:
            if self.resume.checkpoints is None:
                found.append(
                    "--autocheckpoint needs --checkpoints DIR: Autocheckpoint warns your script "
                    "with SIGTERM so that it saves there, and a new TPU resumes from it."
                )
            elif not self.autocheckpoint_can:
                found.append(
                    "--autocheckpoint is for TPU-API nodes of v2, v3, v4 and v5e only (Google's "
                    f"Autocheckpoint, Preview); {self.accelerator} on {self.backend} cannot have "
                    "it. Leave out --autocheckpoint."
                )
        found.extend(via_problems(self.where, self.keep, self.max_run))
        found.extend(reach_problems(self.reach, self.slice, self.backend))
        found.extend(deadline_problems(self.deadline, self.route, self.backend))
        found.extend(zones_problems(self.where, self.deadline.queue_wait_minutes))
        found.extend(watchdog_problems(self.deadline, self.deadline_keeper))
        found.extend(account_problems(self.reach, self.project))
        found.extend(workload_problems(self.workload))
        found.extend(self._resume_problems())
        folder = paths.folder_problem(self.run_dir, "The run folder ({0})")
        if folder:
            found.append(phrase(folder, Choice("run_dir")))
        return found

    def _resume_problems(self) -> list[Said]:
        """The Resume part's rules, given what they read of the rest of the plan."""
        return resume_problems(
            self.resume,
            slice_=self.slice,
            accelerator=self.accelerator,
            route=self.route,
            zone=self.zone,
            script=self.workload.script,
            keep=self.keep,
            # An unknown route has no deadline to check (its own rule reports it).
            max_run=self.max_run if self.route in DEFAULT_MAX_RUN else None,
            run_dir=self.run_dir,
            run_id=self.run_id,
        )

    def validate(self) -> catalog.Slice:
        """Raise :class:`PlanRefused` naming every problem; return the slice when there are
        none."""
        problems = self.problems()
        if problems:
            raise PlanRefused(problems)
        return self.slice


def plan_for_run(
    run_id: str, run_dir: Path, answers: LaunchAnswers, backend: Backend
) -> LaunchPlan:
    """The one place a LaunchPlan is assembled: a front end's ``answers`` for run ``run_id``, on
    the ``backend`` decided for them (never ``auto``). The session's pipeline before create
    reaches it (``Session.prepare``), which mints the run; what the checks find is the
    CheckedPlan's, not the plan's."""
    planned = {f.name for f in fields(LaunchPlan)}
    asked = {f.name: getattr(answers, f.name) for f in fields(answers) if f.name in planned}
    asked.update(where=replace(answers.where, backend=backend))
    asked.update(deadline=replace(answers.deadline, watchdog=bool(answers.deadline.watchdog)))
    return LaunchPlan(run_id=run_id, run_dir=run_dir, **asked)


def attach_problems(plan: LaunchPlan, check: WatchdogCheck | None) -> list[Said]:
    """What the check before create says Google would refuse of ``plan``: a create that
    attaches an account the caller may not attach (403). Said before any call, with every way
    on; empty where the check was not asked or allows it."""
    if check is None or check.may_attach is not False or not plan.attaches_account:
        return []
    grant = f"grant yourself roles/iam.serviceAccountUser on it: {check.fix}"
    if not plan.watchdog:  # a named account, attached whatever the watchdog
        return [
            phrase(
                f"You may not attach the service account {check.account} to a VM (that needs "
                f"iam.serviceAccounts.actAs), so Google would refuse the create. Name another "
                f"account ({{0}}), or {grant}",
                Choice("service_account"),
            )
        ]
    return [
        phrase(
            f"The watchdog cannot run: you may not attach its service account {check.account} "
            "to a VM (that needs iam.serviceAccounts.actAs), so Google would refuse the create. "
            f"Go on without it ({{0}}), give the node another account ({{1}}), or {grant}",
            Choice("watchdog", "off"),
            Choice("service_account"),
        )
    ]


def flex_problems(slice_: catalog.Slice, zone: str, backend: str = "auto") -> list[Said]:
    """Flex-start exists only for a few types and zones on the TPU API (google-behaviour.md,
    Creating), wherever the machine type is on Compute Engine (google_errors.flex_zones, the
    one rule): say so before any API call, with where it does exist. Asked of a known type
    only (an unknown one is reported once, by the accelerator rule)."""
    accelerator = slice_.name
    where = google_errors.flex_zones(slice_, backend)
    if zone in where:
        return []
    offered = f"only in {', '.join(where)}" if where else "in no zone"
    if backend == Backend.COMPUTE:
        offered += " (where Compute Engine has its machine type)"
    return [
        phrase(
            f"Flex-start is not offered for {accelerator} in {zone}: Google offers it for "
            f"{accelerator} {offered}. Choose one of those zones, or another route: {{0}}.",
            Choice("route", "spot,vm"),
        )
    ]
