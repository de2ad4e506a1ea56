"""One launch, from plan to verified teardown, as a stream of events.

``run_launch`` does the work in the calling thread and reports through ``emit``; the session's
:class:`~tpuwizard.session.launch_handle.LaunchHandle` runs it in a thread and hands the events to
a front end. Teardown runs in a
``finally`` unless the plan or the user says keep, so cancellation (a signal, Delete now, an
exception) still tears down. A stop is immediate: the :class:`CancelToken` kills every local
process in flight, the jobs on the workers are ended, and the delete is issued at once.

Billing is stated, not guessed: ``ResourceExists`` before the create call, ``CreateRefused`` when
nothing came of it, ``BillingStarted`` at the first READY, ``BillingStopped`` and
``TeardownVerified`` when it is verified gone, ``Kept`` when the user keeps it, and ``Finished``
lists what still exists. :class:`~tpuwizard.core.launch.records.billing_state.BillingState` folds
them. With ``--checkpoints`` the launch's attempts form a :class:`ResumeChain` (``launch_chain``):
each the launch's own, its node's deadline the time left of the chain's (or of ``--budget``'s),
its cost counted once it is verified gone.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace

from tpuwizard.core.cancel import KEEP_SAFE, KEEP_UNSAFE, CancelToken
from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import LedgerUnwritable, RemoteError
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_FAILED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.ending import Ending, stopped_diagnosis
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import (
    diagnosis_names,
    ending_input,
    provision_input,
    worker_input,
)
from tpuwizard.core.launch.lifecycle.provision import Provisioner
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.advice import possible
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.resume_rules import earlier_run_folder
from tpuwizard.core.launch.resume.chain import AttemptEnd, ChainLimits, ResumeChain
from tpuwizard.core.launch.workers.heartbeat import heartbeat_interval, heartbeats, send_heartbeat
from tpuwizard.core.launch.workers.held_chip import ChipHeld, held_before_rerun
from tpuwizard.core.launch.workers.rerun import run_script_with_reruns
from tpuwizard.core.launch.workers.watchdog import arm_watchdog
from tpuwizard.core.plan import cost
from tpuwizard.core.remote.sync import folder_sent
from tpuwizard.core.remote.transports import Transport


class Launch:
    """One launch, composed of its parts: the :class:`Provisioner` (what exists and bills), the
    :class:`WorkerSteps` (what runs on the workers) and the :class:`Ending` (keep or delete,
    verified, priced), sharing one :class:`LaunchContext` (the events, the stop, one
    :class:`LaunchState`); each is handed its own small input of what it reads of the plan and
    the runtime (lifecycle/part_inputs.py). This class only sequences them.

    Private to this module: use :func:`run_launch`, which checks the plan first.
    """

    def __init__(
        self, plan: LaunchPlan, rt: Runtime, emit: Callable[[ev.Event], None], cancel: CancelToken
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.slice = plan.slice
        self.state = LaunchState(plan.zone)
        self.about = diagnosis_names(plan)  # a diagnosis's names; its zone is the state's
        ctx = LaunchContext(emit, cancel, self.state)
        self.ending = Ending(ending_input(plan, rt), ctx)
        self.provisioner = Provisioner(provision_input(plan, rt), ctx, self.ending.teardown)
        self.workers = WorkerSteps(worker_input(plan, rt), ctx)
        # --checkpoints: the whole chain's end (--max-run from its start), and the node that went
        # away under the last attempt (the chain, not the attempt, says so).
        self.chain_deadline: float | None = None
        self.gone: Exception | None = None

    def run(self) -> int:
        plan = self.plan
        code = EXIT_FAILED
        try:
            plan.run_dir.mkdir(parents=True, exist_ok=True)
            self.emit(
                ev.Planned(
                    plan.run_id,
                    plan.node_name,
                    plan.accelerator,
                    plan.zone,
                    plan.route,
                    plan.project,
                    self.slice.chips,
                    self.slice.vms,
                    cost.hourly(self.slice, plan.route, plan.zone),
                    plan.max_run,
                    self.rt.practice,
                    str(plan.run_dir),
                    plan.workload.fetch,
                    plan.resume.budget_usd,
                    cost.at_most_hourly(self.slice, plan.route, plan.zone),
                    plan.resume.max_restarts + 1 if plan.resume.checkpoints is not None else None,
                    *cost.price_origin(self.slice, plan.route, plan.zone),
                    folder=(
                        folder_sent(plan.workload.script)
                        if plan.workload.script is not None
                        else None
                    ),
                )
            )
            if not plan.watchdog:  # nothing better will come: Keep keeps at once, as it is
                self.cancel.settle_keep(KEEP_SAFE)
            code = self.steps()
        except Exception as err:  # a bug or the local disk: still a diagnosis, still torn down
            d = possible(diagnose(err, self.state.context(self.about)), plan)
            self.emit(ev.Failed("launch", d))
            code = EXIT_FAILED
        finally:
            code = self.ending.finish(code)
        return code

    def steps(self) -> int:
        """One attempt; or with --checkpoints, attempts until one ends other than gone."""
        if self.plan.resume.checkpoints is not None:
            return launch_chain(self).run()
        return self.attempt()

    def deadline(self) -> float | None:
        created = self.state.created_at
        if self.chain_deadline is not None:
            return self.chain_deadline
        return created + self.plan.max_run_s if created else None

    def attempt(self, quiet_gone: bool = False, again: bool = False) -> int:
        """Provision, connect, bootstrap, verify, run the script; the exit code, never raises.

        ``quiet_gone`` (the chain's): a node that went away is kept in ``self.gone``, not said
        as Failed, nor is a script whose job recorded a SIGTERM while its node stayed READY
        (the chain runs it again, or says why not). ``again``: only the script, on the node
        the last attempt ran it on, once its chip is checked (held_chip.py)."""
        stage, state, workers = "provision", self.state, self.workers
        self.gone = state.went_away = None
        try:
            if again and state.transport is not None:
                transport, stage = state.transport, "script"
                workers.script_exit_code, workers.script_sigterm = None, ()  # not yet run again
            else:
                node = self.provisioner.provision()
                transport = self.rt.make_transport(node)
                transport.cancel = self.cancel
                state.transport = transport
                stage = "connect"
                transport.wait_until_reachable(self.rt.reachable_timeout)
                self.emit(ev.SshReady(transport.workers))
                self.cancel.check()
                stage = "bootstrap"
                # Armed at the first SSH, before anything that can fail on the node: a node the
                # plan keeps is handed over only with the guard its plan line promised.
                if self.plan.watchdog:
                    self.arm_watchdog(transport)
            with self.holding(transport):
                if stage != "script":
                    workers.bootstrap(transport)
                    stage = "verify"
                    workers.verify(transport)
                    state.proven = workers.receipt_ok
                else:  # again: what the last run left holding the TPU is ended; another's stops
                    workers.check_chip(transport, even_if_held=False)
                if self.plan.workload.script is not None:
                    stage = "script"
                    run_script_with_reruns(workers, transport, self.rt.reruns, self.deadline())
            if quiet_gone and workers.script_sigterm and not self.cancel.is_set():
                # It ended on a SIGTERM (saved and exited 0, say): is its node still there?
                signalled = RemoteError("your script got SIGTERM")
                self.gone = state.went_away = self.provisioner.went_away(stage, signalled)
                if self.gone is not None:
                    return EXIT_CLOUD
            return EXIT_OK if workers.receipt_ok and not workers.fetch_incomplete else EXIT_FAILED
        except ChipHeld as held:  # the script did not run again: the chain ends here
            self.emit(ev.Failed(stage, held_before_rerun(held, kept=False)))
            return EXIT_FAILED
        except Exception as err:  # every failure becomes a diagnosis, never a traceback
            if self.cancel.is_set():  # a stop, or a command the stop broke: the stop is the news
                if not self.cancel.keep:
                    self.emit(ev.Failed(stage, stopped_diagnosis(self.cancel.reason)))
                return EXIT_FAILED
            d = diagnose(err, state.context(self.about))
            gone = self.provisioner.went_away(stage, err) if stage != "provision" else None
            state.went_away = gone
            if gone is not None and quiet_gone:
                self.gone = gone
                return EXIT_CLOUD
            if quiet_gone and stage == "script" and workers.script_sigterm:
                return EXIT_FAILED  # its node is READY: the chain runs it again, or says why not
            if gone is not None:  # Google took it away, or someone deleted it: a cloud event
                d = diagnose(gone, state.context(self.about))
            self.emit(ev.Failed(stage, possible(d, self.plan)))
            if isinstance(err, LedgerUnwritable):  # this computer's disk: nothing was created
                return EXIT_BAD_INPUT
            cloud_event = gone is not None or stage in ("provision", "connect")
            return EXIT_CLOUD if cloud_event else EXIT_FAILED

    def holding(self, transport: Transport) -> contextlib.AbstractContextManager[None]:
        """Heartbeats while this launch still holds the node (an idle watchdog waits for them).

        The idle time of ``up --idle`` starts when the watchdog is armed; the verifier (and a
        slow machine) can outlast a short one, and the node must not be deleted under its own
        launch. A missed beat is said as a bootstrap line; the run goes on."""
        if not (self.plan.watchdog and self.plan.deadline.idle_minutes):
            return contextlib.nullcontext()

        def said(problem: str) -> None:
            self.emit(ev.BootstrapLine(0, problem, transport.workers))

        def beat() -> None:
            try:
                send_heartbeat(transport)
            except Exception as err:  # the first beat too: a missed one is no failure
                said(f"heartbeat not sent: {err}")

        return heartbeats(beat, heartbeat_interval(self.plan.deadline.idle_minutes * 60), said)

    def arm_watchdog(self, transport: Transport) -> None:
        """Arm the on-VM watchdog, and settle a Keep asked for meanwhile by how that went."""
        state = self.state
        assert state.resource is not None and state.created_at is not None
        deadline = self.deadline() or state.created_at + self.plan.max_run_s
        account = self.plan.reach.service_account
        idle = self.plan.deadline.idle_minutes
        idle_s = idle * 60 if idle else None
        if arm_watchdog(
            transport, state.resource, deadline, self.rt.watchdog, self.emit, account, idle_s
        ):
            state.watchdog_deadline = deadline
            self.cancel.settle_keep(KEEP_SAFE)  # a Keep asked for meanwhile is kept now
        elif self.cancel.settle_keep(KEEP_UNSAFE):
            # Keep was promised with a watchdog that could not be armed: the user decides
            # (Delete now, or Keep without one); until then the launch waits, billing.
            self.emit(ev.KeepNeedsAnswer(state.resource.name, "the watchdog could not be armed"))
            while True:
                self.cancel.sleep(3600.0)  # an answer sets the token: Cancelled ends this


def bad_plan_diagnosis(problems: list[Said]) -> Diagnosis:
    return Diagnosis(
        "bad_input",
        "The plan is not valid",
        "It breaks the rules below; nothing was created.",
        list(problems),
    )


def run_launch(
    plan: LaunchPlan,
    rt: Runtime,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken | None = None,
) -> int:
    """Run one launch in this thread; returns its exit code (0, 1, 2, 3 or 4)."""
    problems = plan.problems()
    if problems:  # front ends check as the user types; this is the last line, before any call
        emit(ev.Failed("plan", bad_plan_diagnosis(problems)))
        emit(ev.Finished(False, EXIT_BAD_INPUT, str(plan.run_dir), None))
        return EXIT_BAD_INPUT
    return Launch(plan, rt, emit, cancel or CancelToken()).run()


class LaunchAttempts:
    """:class:`~tpuwizard.core.launch.resume.chain.ChainAttempts` of one launch."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.emit = launch.emit
        self.again = False  # the next attempt runs the script again on the last one's node

    @property
    def zone(self) -> str:
        return self.launch.state.zone

    def bound(self, minutes: float) -> None:
        launch = self.launch
        launch.chain_deadline = time.time() + minutes * 60
        # The next create's --max-run: as the plan would say it with these minutes.
        bounded = replace(launch.plan.deadline, max_run_minutes=minutes)
        max_run_s = replace(launch.plan, deadline=bounded).max_run_s
        given = launch.provisioner.given
        launch.provisioner.given = replace(given, max_run_s=max_run_s)

    def attempt(self) -> AttemptEnd:
        launch, state = self.launch, self.launch.state
        again, self.again = self.again, False
        code = launch.attempt(quiet_gone=True, again=again)
        r = state.resource
        return AttemptEnd(
            code,
            launch.gone,
            state.zone,
            (r.node_id or r.name) if r else launch.plan.node_name,
            state.receipt,  # on the same node again: its verifier's receipt still holds
            launch.workers.script_exit_code,
            launch.cancel.is_set(),
            launch.workers.script_sigterm,
        )

    def end_gone(self) -> bool:
        return self.launch.ending.teardown()

    def spent(self) -> float:
        ending = self.launch.ending
        return ending.earlier_cost + (ending.cost_so_far() or 0.0)

    def next_attempt(self) -> None:
        """The gone node's cost into the earlier attempts', and the launch's state as before a
        first create."""
        ending, state = self.launch.ending, self.launch.state
        ending.earlier_cost += ending.cost_so_far() or 0.0
        state.node = state.transport = None
        state.created_at = state.costing_since = state.gone_at = None
        state.watchdog_deadline = state.receipt = None
        state.proven = False
        state.running_jobs.clear()

    def run_again(self) -> None:
        """The script got a SIGTERM and its node is READY: the next attempt is the script
        alone, on that node (bootstrapped, verified and guarded by its watchdog already)."""
        self.again = True

    def gone_diagnosis(self, gone: Exception) -> Diagnosis:
        return diagnose(gone, self.launch.state.context(self.launch.about))


def launch_chain(launch: Launch) -> ResumeChain:
    """The chain of ``launch``'s attempts; ``--max-run`` counts from now."""
    plan, resume = launch.plan, launch.plan.resume
    assert resume.checkpoints is not None
    setup = ResumeChain.setup_for(resume.checkpoints, plan.run_dir, resume.checkpoint_every_s)
    launch.workers.resume = setup
    limits = ChainLimits(
        plan.run_dir,
        plan.run_id,
        resume.max_restarts,
        time.time() + plan.max_run_s,
        plan.slice,
        plan.route,
        resume.budget_usd,
        resume.from_run,
        earlier_run_folder(resume, plan.run_dir) if resume.from_run is not None else None,
    )
    return ResumeChain(LaunchAttempts(launch), limits, setup)
