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
lists what still exists. :class:`~tpuwizard.core.launch.billing.BillingState` folds them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from tpuwizard.core.cancel import KEEP_SAFE, KEEP_UNSAFE, CancelToken
from tpuwizard.core.choices import Said
from tpuwizard.core.cloud.diagnose import Context, diagnose, preempted_diagnosis
from tpuwizard.core.cloud.diagnosis import Diagnosis
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, RemoteError
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.ending import Ending, stopped_diagnosis
from tpuwizard.core.launch.ledger import Resource
from tpuwizard.core.launch.on_workers import WorkerSteps
from tpuwizard.core.launch.ownership import identity, is_instance, live_labels
from tpuwizard.core.launch.plan import (
    DEFAULT_MAX_RUN,
    EXIT_BAD_INPUT,
    EXIT_CLOUD,
    EXIT_FAILED,
    EXIT_OK,
    LaunchPlan,
)
from tpuwizard.core.launch.rerun import run_script_with_reruns
from tpuwizard.core.launch.runtime import Runtime
from tpuwizard.core.launch.watchdog import arm_watchdog
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.transports import Transport


class Launch(WorkerSteps, Ending):
    """The steps of one launch. Private to this module: use :func:`run_launch`."""

    def __init__(
        self, plan: LaunchPlan, rt: Runtime, emit: Callable[[ev.Event], None], cancel: CancelToken
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.zone = plan.zone
        self.resource: Resource | None = None
        self.node: NodeInfo | None = None
        self.versions: dict[int, dict[str, Any]] = {}
        self.checks: dict[int, dict[str, bool]] = {}
        self.created_at: float | None = None
        self.costing_since: float | None = None  # the first READY
        self.receipt_ok = False
        self.running_jobs: list[tuple[int, Job]] = []
        self.transport: Transport | None = None
        self.watchdog_deadline: float | None = None

    # -- steps ------------------------------------------------------------------------------
    def run(self) -> int:
        plan = self.plan
        problems = plan.problems()
        if problems:  # front ends check as the user types; this is the last line, before any call
            self.emit(ev.Failed("plan", bad_plan_diagnosis(problems)))
            self.emit(ev.Finished(False, EXIT_BAD_INPUT, str(plan.run_dir), None))
            return EXIT_BAD_INPUT
        self.slice = catalog.parse_accelerator(plan.accelerator)
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
                    cost.hourly(plan.accelerator, plan.route, plan.zone),
                    self.max_run,
                    self.rt.practice,
                    str(plan.run_dir),
                )
            )
            if not plan.watchdog:  # nothing better will come: Keep keeps at once, as it is
                self.cancel.settle_keep(KEEP_SAFE)
            code = self.steps()
        except Exception as err:  # a bug or the local disk: still a diagnosis, still torn down
            self.emit(ev.Failed("launch", diagnose(err, self.context())))
            code = EXIT_FAILED
        finally:
            code = self.finish(code)
        return code

    def steps(self) -> int:
        """Provision, connect, bootstrap, verify, run the script; the exit code, never raises."""
        stage = "provision"
        try:
            node = self.provision()
            transport = self.rt.make_transport(node)
            transport.cancel = self.cancel
            self.transport = transport
            stage = "connect"
            transport.wait_until_reachable(self.rt.reachable_timeout)
            self.emit(ev.SshReady(transport.workers))
            self.cancel.check()
            stage = "bootstrap"
            self.bootstrap(transport)
            if self.plan.watchdog:
                self.arm_watchdog(transport)
            stage = "verify"
            self.verify(transport)
            if self.plan.script is not None:
                stage = "script"
                deadline = self.created_at + self.max_run * 60 if self.created_at else None
                run_script_with_reruns(self, transport, self.rt.reruns, deadline)
            return EXIT_OK if self.receipt_ok and not self.fetch_incomplete else EXIT_FAILED
        except Exception as err:  # every failure becomes a diagnosis, never a traceback
            if self.cancel.is_set():  # a stop, or a command the stop broke: the stop is the news
                if not self.cancel.keep:
                    self.emit(ev.Failed(stage, stopped_diagnosis(self.cancel.reason)))
                return EXIT_FAILED
            d = diagnose(err, self.context())
            preempted = stage != "provision" and self._preempted()
            if preempted:  # Google took it away: a cloud event, not a failed verification
                d = preempted_diagnosis(self.plan.route)
            self.emit(ev.Failed(stage, d))
            return EXIT_CLOUD if preempted or stage in ("provision", "connect") else EXIT_FAILED

    def context(self) -> Context:
        p = self.plan
        return Context(
            project=p.project, zone=self.zone, accelerator=p.accelerator, name=p.node_name
        )

    @property
    def max_run(self) -> float:
        return self.plan.max_run_minutes or DEFAULT_MAX_RUN[self.plan.route]

    def provision(self) -> NodeInfo:
        tried = []
        while True:
            tried.append(self.zone)
            try:
                return self.create_in(self.zone)
            except CreateFailed as err:
                d = diagnose(err, self.context())
                left = [z for z in d.alternatives if z not in tried]
                if not (self.plan.failover and d.kind == "stockout" and left):
                    raise
                self.emit(ev.ZoneFailover(self.zone, left[0], d.title))
                self.zone = left[0]

    def create_in(self, zone: str) -> NodeInfo:
        plan, rt = self.plan, self.rt
        req = NodeRequest(
            zone=zone,
            node_id=plan.node_name,
            accelerator_type=plan.accelerator,
            run_id=plan.run_id,
            metadata=dict(rt.ssh_metadata),
            spot=plan.route == "spot",
            cloud_platform_scope=plan.watchdog,
            service_account=plan.service_account,
            external_ips=not plan.internal_ips,
            queue_wait_s=rt.ready_timeout,
            owner=rt.owner,
        )
        queued = plan.route in ("spot", "flex")
        name = f"{plan.node_name}-qr" if queued else plan.node_name
        resource = Resource(
            "queued" if queued else "node",
            plan.project,
            zone,
            name,
            plan.accelerator,
            plan.run_id,
            plan.route,
            plan.node_name if queued else None,
            rt.owner,
        )
        self.cancel.check()
        rt.ledger.record("intent", resource)  # before the call: a crash now still leaves a trace
        self.resource = resource
        self.emit(
            ev.ResourceExists(name, resource.kind, zone, plan.accelerator, plan.route, plan.run_id)
        )
        started = time.time()
        operation = self._create_checked(req, resource, name)
        rt.ledger.record("created", resource)
        self.created_at = started

        def on_state(state: str) -> None:
            # Nothing costs until READY: a node being made or a request waiting costs nothing.
            self.emit(ev.Provisioning(state, round(time.time() - started, 1), 0.0))

        try:
            if queued:
                rt.cloud.wait_for_queued(
                    zone, name, on_state, rt.ready_timeout, rt.poll, cancelled=self.cancel.is_set
                )
                operation, on_state_node = None, None
            else:
                on_state_node = on_state
            node = rt.cloud.wait_for_node(
                zone,
                plan.node_name,
                operation,
                on_state_node,
                rt.ready_timeout,
                rt.poll,
                cancelled=self.cancel.is_set,
            )
        except CreateFailed:
            # A failed create (a stockout) may leave nothing or a broken node: clean either up
            # before trying elsewhere, so failover never leaves a trail.
            self.teardown()
            raise
        self.costing_since = time.time()
        self.emit(
            ev.BillingStarted(
                name, self.costing_since, cost.hourly(plan.accelerator, plan.route, zone)
            )
        )
        if len(node.endpoints) != self.slice.vms:
            raise RemoteError(
                f"{plan.accelerator} has {self.slice.vms} VMs but the node reports "
                f"{len(node.endpoints)} workers"
            )
        self.node = node
        # Its server-side identity: later commands touch only this very node, never another
        # that takes its name after it is gone.
        rt.ledger.record("created", resource, **identity(node.uid, node.create_time))
        self.emit(ev.Ready(len(node.endpoints), list(node.endpoints)))
        return node

    def _create_checked(self, req: NodeRequest, resource: Resource, qr_name: str) -> object:
        """Call create; after a transient failure, retry only once ``get`` shows nothing exists."""
        from google.api_core import exceptions as gx

        rt, plan = self.rt, self.plan
        for attempt in range(3):
            try:
                if resource.kind == "queued":
                    rt.cloud.create_queued(req, qr_name, plan.route, int(self.max_run * 60))
                    return None
                return rt.cloud.create_node(req)
            except Exception as err:
                exists = self._exists(resource)
                if exists is True:  # the call went through although its answer was lost
                    return None
                if isinstance(err, gx.Conflict):
                    self._name_taken(resource, known_foreign=exists is False)
                    raise
                transient = isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests) and (
                    not isinstance(err, gx.ResourceExhausted)
                )
                if exists is False and transient and attempt < 2:
                    self.cancel.sleep(1.0 + attempt)
                    continue
                if exists is False:
                    rt.ledger.record("gone", resource, never_created=True)
                    self.resource = None
                    self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))
                raise
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _preempted(self) -> bool:
        """Did Google take a spot node away? Then that, not the broken command, is the news."""
        try:
            node = self.rt.cloud.get_node(self.zone, self.plan.node_name)
        except Exception:
            return False
        return node is not None and node.state == "PREEMPTED"

    def arm_watchdog(self, transport: Transport) -> None:
        assert self.resource is not None and self.created_at is not None
        deadline = self.created_at + self.max_run * 60
        account = self.plan.service_account
        idle_s = self.plan.idle_minutes * 60 if self.plan.idle_minutes else None
        if arm_watchdog(
            transport, self.resource, deadline, self.rt.watchdog, self.emit, account, idle_s
        ):
            self.watchdog_deadline = deadline
            self.cancel.settle_keep(KEEP_SAFE)  # a Keep asked for meanwhile is kept now
        elif self.cancel.settle_keep(KEEP_UNSAFE):
            # Keep was promised with a watchdog that could not be armed: the user decides
            # (Delete now, or Keep without one); until then the launch waits, billing.
            self.emit(ev.KeepNeedsAnswer(self.resource.name, "the watchdog could not be armed"))
            while True:
                self.cancel.sleep(3600.0)  # an answer sets the token: Cancelled ends this

    def _exists(self, resource: Resource) -> bool | None:
        """After a failed create call: does *this run's* resource exist? None when we cannot
        tell. Something else holding the name (another run, another user, made by hand) is
        False: only labels naming this run make a resource ours."""
        try:
            labels = live_labels(self.rt.cloud, resource)
        except Exception:
            return None
        return labels is not None and is_instance(labels, resource)

    def _name_taken(self, resource: Resource, known_foreign: bool) -> None:
        """The create answered 409 and the resource holding the name is not ours (or we could
        not read it): a 409 never leads to a delete, so this launch owns nothing to tear down.

        When its labels were read, this run's instance never existed and the ledger says so;
        when they could not be, the intent stays open and ``status`` settles it later by labels.
        """
        if known_foreign:
            self.rt.ledger.record("gone", resource, never_created=True, name_taken=True)
        self.resource = None
        self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))


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
    return Launch(plan, rt, emit, cancel or CancelToken()).run()
