"""``run --checkpoints DIR``: a run on a kept spot node that survives its preemption, as a
launch's does (core/launch/resume/chain.py runs both chains).

While the script runs, its checkpoints come home to ``runs/<id>/checkpoints``. When the kept
node goes away under it, it is deleted and verified gone (its queued resource too), and a new
node is made from the settings ``up`` recorded with it in the ledger, by the launch's own code
(its intent in the ledger before the create, bootstrapped, verified, its watchdog armed, kept);
the old node's record says what replaced it, the latest complete set is put back and the script
started again with ``TPUWIZARD_RESUME=1``. The new node keeps the old one's deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.record import REPLACED_BY_FIELD
from tpuwizard.core.launch.kept.settings import kept_chain_end, replacement_answers
from tpuwizard.core.launch.plan.resume_rules import MAX_RESTARTS, checkpoints_problem
from tpuwizard.core.launch.plan.route_offers import RESUME_ROUTES
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.launch.resume.chain import AttemptEnd, ChainLimits, ResumeChain
from tpuwizard.core.launch.resume.checkpoint_copier import ResumeSetup
from tpuwizard.core.plan import cost
from tpuwizard.core.remote.sync import LocalFolder

if TYPE_CHECKING:
    from tpuwizard.core.cloud.diagnose.diagnosis import Context
    from tpuwizard.core.launch.kept.iterate import ScriptRun
    from tpuwizard.core.launch.records.ledger import Entry
    from tpuwizard.session.services import SessionServices


class KeptNodesView(Protocol):
    """What the chain uses of the kept nodes (:class:`~tpuwizard.session.kept.nodes.KeptNodes`)."""

    @property
    def session(self) -> SessionServices: ...

    def open(self, name: str | None) -> ResumableNode: ...


class ResumableNode(Protocol):
    """What the chain uses of a kept node (:class:`~tpuwizard.session.kept.nodes.KeptNode`): its
    record, its name, one run of the script on it, who holds its chip, and what a diagnosis
    needs."""

    @property
    def nodes(self) -> KeptNodesView: ...

    @property
    def entry(self) -> Entry: ...

    @property
    def name(self) -> str: ...

    def run_once(
        self,
        plan: ScriptRun,
        folder: LocalFolder,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
    ) -> tuple[int, Exception | None]: ...

    def check_chip(self, even_if_held: bool, emit: Callable[[ev.Event], None]) -> None: ...

    def context(self) -> Context: ...


@dataclass(frozen=True)
class CheckpointsAsked:
    """``run --checkpoints DIR [--checkpoint-every] [--max-restarts]``."""

    folder: str  # relative to the script's folder on the worker
    every_s: float
    max_restarts: int

    def setup(self, run_dir: Path) -> ResumeSetup:
        return ResumeChain.setup_for(self.folder, run_dir, self.every_s)


def checkpoints_asked_problems(asked: CheckpointsAsked) -> list[Said]:
    """The rules of ``run --checkpoints`` that need no node: launch's for the folder."""
    found: list[Said] = []
    problem = checkpoints_problem(asked.folder)
    if problem:
        found.append(problem)
    if not 0 <= asked.max_restarts <= MAX_RESTARTS:
        found.append(f"--max-restarts must be 0 to {MAX_RESTARTS}, not {asked.max_restarts}.")
    return found


def resume_problems(resource: Resource, asked: CheckpointsAsked | None) -> list[Said]:
    """Why the kept node cannot run with ``--checkpoints``; empty when it can (or is not
    asked)."""
    if asked is None:
        return []
    found = checkpoints_asked_problems(asked)
    if resource.route not in RESUME_ROUTES:
        found.append(
            f"--checkpoints resumes a run after Google preempts its spot TPU; {resource.name} "
            f"is on the {resource.route} route, not preempted that way: leave --checkpoints "
            "out, or keep a spot node (tpuwizard up --route spot)."
        )
    return found


class KeptAttempts:
    """:class:`~tpuwizard.core.launch.resume.chain.ChainAttempts` of a kept node: the first
    attempt on it, each later one on a new node made from ``up``'s settings."""

    def __init__(
        self,
        node: ResumableNode,
        run: ScriptRun,
        folder: LocalFolder,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
        even_if_held: bool = False,
    ) -> None:
        self.node: ResumableNode | None = node
        self.last: ResumableNode = node  # the node of the last attempt (gone, once it went)
        self.run, self.folder, self.emit, self.cancel = run, folder, emit, cancel
        self.session = node.nodes.session
        self.minutes = 0.0
        self.even_if_held = even_if_held  # run's --even-if-held: for each run on the node
        self.again = False  # the next attempt runs the script again on the last one's node

    @property
    def zone(self) -> str:
        return self.last.entry.resource.zone

    def bound(self, minutes: float) -> None:
        self.minutes = minutes

    def attempt(self) -> AttemptEnd:
        receipt = None
        if self.node is None:
            made = self._replace()
            if isinstance(made, AttemptEnd):
                return made
            self.node, receipt = made
        node = self.last = self.node
        again, self.again = self.again, False
        if again and (held := self._chip_checked(node)) is not None:
            return held
        finished: list[ev.ScriptFinished] = []

        def heard(event: ev.Event) -> None:
            if isinstance(event, ev.ScriptFinished):
                finished.append(event)
            self.emit(event)

        code, gone = node.run_once(self.run, self.folder, heard, self.cancel)
        exit_code = finished[-1].exit_code if finished else None
        sigterm = finished[-1].sigterm if finished else ()
        if sigterm and gone is None and not self.cancel.is_set():
            gone = self._fate(node)  # it ended on a SIGTERM: is the node still READY?
        return AttemptEnd(
            code, gone, self.zone, node.name, receipt, exit_code, self.cancel.is_set(), sigterm
        )

    def _chip_checked(self, node: ResumableNode) -> AttemptEnd | None:
        """Before the script runs again on ``node``: what its last run left holding the chip is
        ended (core/launch/workers/held_chip.py); None to go on, else how the attempt ended (a
        process not ours holds it, or the node went away, or the listing failed)."""
        from tpuwizard.core.errors import NodeGone, QueueSuspended, RemoteError
        from tpuwizard.core.launch.workers.held_chip import ChipHeld, held_before_rerun

        stopped = self.cancel.is_set()
        try:
            node.check_chip(self.even_if_held, self.emit)
        except ChipHeld as held:  # the chain ends: the script would fail to start JAX
            self.emit(ev.Failed("script", held_before_rerun(held, kept=True)))
            return AttemptEnd(EXIT_FAILED, None, self.zone, node.name, None, None, stopped)
        except (NodeGone, QueueSuspended) as gone:  # preempted meanwhile: the chain's next step
            return AttemptEnd(EXIT_CLOUD, gone, self.zone, node.name, None, None, stopped)
        except RemoteError as err:
            self.emit(ev.Failed("script", diagnose(err, node.context())))
            return AttemptEnd(EXIT_CLOUD, None, self.zone, node.name, None, None, stopped)
        return None

    def _fate(self, node: ResumableNode) -> Exception | None:
        """What the listing says of ``node`` after its script got SIGTERM: gone (preempted,
        deleted) or None while it is READY (or the API cannot say)."""
        from tpuwizard.core.errors import RemoteError
        from tpuwizard.core.launch.lifecycle.vanished import went_away

        r = node.entry.resource
        queued = r.name if r.kind == "queued" else None
        cloud = self.session.cloud_for(r.backend)
        doing = "after your script got SIGTERM"
        return went_away(cloud, r.zone, node.name, queued, doing, RemoteError(doing))

    def end_gone(self) -> bool:
        """Delete the gone node (its queued resource too) and verify it, as ``status`` ends a
        preempted kept node."""
        entry = self.last.entry
        r = entry.resource
        self.emit(ev.TeardownStarted(r.name, r.kind, r.zone))
        (result,) = self.session.delete([r])
        if not result.verified:
            d = result.diagnosis or Diagnosis("teardown", f"{r.name} was not verified gone", "")
            self.emit(ev.TeardownFailed(r.name, r.kind, d, r.zone, practice=self.session.practice))
            return False
        billed = max(0.0, time.time() - entry.first_at)  # at most: from its intent
        price = cost.estimate(r.slice, r.route, billed, r.zone)
        self.emit(ev.BillingStopped(r.name, round(billed, 1), price, r.zone))
        self.emit(
            ev.TeardownVerified(
                r.name, r.kind, round(billed, 1), price, r.zone, practice=self.session.practice
            )
        )
        return True

    def spent(self) -> float:
        return 0.0  # run has no --budget: the chain is bounded by the node's deadline

    def next_attempt(self) -> None:
        self.node = None

    def run_again(self) -> None:
        """The next attempt runs on the same node (it stays ``self.node``), its chip checked."""
        self.again = True

    def gone_diagnosis(self, gone: Exception) -> Diagnosis:
        return diagnose(gone, self.last.context())

    def _replace(self) -> tuple[ResumableNode, str | None] | AttemptEnd:
        """A new kept node from ``up``'s settings, by the launch's own code (ledger intent,
        create, bootstrap, verify, watchdog, kept); the old record names it. A failure is
        the attempt's end, and whatever the new launch left is deleted (as ``up`` does)."""
        from tpuwizard.core.launch.lifecycle.launch import run_launch
        from tpuwizard.core.launch.plan.launch_plan import ready_timeout_s
        from tpuwizard.session.login import recorded_login
        from tpuwizard.session.runtime import build_runtime

        session, old = self.session, self.last
        # Logged in to as up chose (session/login.py): under OS Login the key stays in the
        # profile until the old node's deadline, which the new node's never passes.
        login, os_login = recorded_login(old.entry)
        answers = replacement_answers(old.entry)
        # Never past the old deadline.
        bounded = replace(answers.deadline, max_run_minutes=float(math.floor(self.minutes)))
        answers = replace(answers, deadline=bounded)
        # The plan's reach rules hold for its reach: the transport up logged in with.
        answers = replace(
            answers, reach=replace(answers.reach, transport=Transport(login.transport))
        )
        plan = session.plan_launch(answers, answers.where.backend)
        run_id = plan.run_id
        cloud = session.cloud_for(plan.backend)
        runtime = build_runtime(cloud, session.practice, login.transport, os_login, login.account)
        runtime.ready_timeout = ready_timeout_s(plan.route)
        receipts: list[str] = []
        unarmed: list[ev.Watchdog] = []

        def forward(event: ev.Event) -> None:
            session.billing.apply(event)
            if isinstance(event, ev.ReceiptSaved):
                receipts.append(event.path)
            if isinstance(event, ev.Watchdog) and not event.armed:
                unarmed.append(event)
            if not isinstance(event, ev.Finished):  # the run's own Finished comes at its end
                self.emit(event)

        code = run_launch(plan, runtime, forward, self.cancel)
        new = None
        if code == EXIT_OK and not unarmed:
            new = old.nodes.open(plan.node_name)
        if new is None:  # a node nothing would delete is not kept, as with up
            left = [
                e.resource for e in session.ledger.open_entries() if e.resource.run_id == run_id
            ]
            session.delete(left)
            if unarmed:
                self.emit(ev.Failed("watchdog", _unarmed(plan.node_name, unarmed[-1])))
            return AttemptEnd(
                code if code != EXIT_OK else EXIT_CLOUD,
                None,
                plan.zone,
                plan.node_name,
                receipts[-1] if receipts else None,
                None,
                self.cancel.is_set(),
            )
        session.ledger.record("gone", old.entry.resource, **{REPLACED_BY_FIELD: new.name})
        self.emit(ev.KeptReplaced(old.name, new.name, new.entry.resource.zone, run_id))
        return new, receipts[-1] if receipts else None


def _unarmed(name: str, watchdog: ev.Watchdog) -> Diagnosis:
    return Diagnosis(
        "watchdog",
        f"{name} was not kept: its watchdog could not be armed",
        f"Nothing would delete it later ({watchdog.detail}), so it was deleted.",
        ["Start one with `tpuwizard up --no-watchdog` to keep a node anyway."],
    )


def run_resumable(
    node: ResumableNode,
    run: ScriptRun,
    folder: LocalFolder,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken,
    asked: CheckpointsAsked,
    even_if_held: bool = False,
) -> tuple[int, str | None]:
    """The run's chain on ``node`` and its replacements: the exit code, and the kept node
    at the end (None when none is)."""
    assert run.resume is not None
    limits = ChainLimits(
        run.run_dir,
        run.run_id,
        asked.max_restarts,
        kept_chain_end(node.entry, time.time()),
        node.entry.resource.slice,
        node.entry.resource.route,
    )
    attempts = KeptAttempts(node, run, folder, emit, cancel, even_if_held)
    code = ResumeChain(attempts, limits, run.resume).run()
    return code, attempts.node.name if attempts.node is not None else None
