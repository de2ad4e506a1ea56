"""What exists and bills, from the first call: create the node (or the queued request for one),
wait for READY, fail over to another zone after a stockout (``--zones`` in order, or every zone
offering the type), or with ``--fan-out`` create in every zone at once (lifecycle/fan_out.py). Each
attempt's outcome goes into the zone history (attempts.py).

The ledger hears of the resource before the create call (a crash then still leaves a trace),
and a create whose answer was lost is settled by reading, never by blindly creating again.
A failed wait tears down what may have been left before the next zone is tried.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.compute_slice_body import MIG, REQUEST, VM
from tpuwizard.core.cloud.diagnose import diagnose
from tpuwizard.core.cloud.diagnosis import Diagnosis
from tpuwizard.core.cloud.network_errors import never_sent
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, RemoteError
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.fan_out import FanOut
from tpuwizard.core.launch.lifecycle.launch_state import LaunchState
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.lifecycle.vanished import went_away
from tpuwizard.core.launch.plan.backend_rules import queue_wait_seconds
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.zone_rules import fails_over, probes, zones_from
from tpuwizard.core.launch.records import attempts
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.launch.records.ownership import identity, is_instance, live_labels
from tpuwizard.core.plan import cost

# The parts that live in a zone (a slice's VMs, its MIG, Route 2B's resize request); the rest
# (a template, a workload policy) in a region.
ZONAL_PARTS = (VM, MIG, REQUEST)


class Provisioner:
    """Creates this launch's resource and waits for it, recording each step in ``state``."""

    def __init__(
        self,
        plan: LaunchPlan,
        rt: Runtime,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
        state: LaunchState,
        teardown: Callable[[LaunchState], bool],
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.state = state
        self.teardown = teardown  # removes what a failed create may have left (of a state)
        self.slice = plan.slice
        self.history = attempts.AttemptHistory.beside(rt.ledger)

    @property
    def queue_wait_s(self) -> float:
        """How long a queued request may wait for capacity (validUntilDuration; Compute
        Engine's requestValidForDuration): Flex-start's --queue-wait (zero for a probe: Compute
        Engine sends its least, 90 s), else the ready wait. The TPU API's queued request takes
        no zero (it would send no validUntilDuration, so wait forever): the ready wait there."""
        wait = 0.0 if probes(self.plan) else queue_wait_seconds(self.plan)
        if wait is None or (wait == 0 and self.rt.cloud.queues(self.plan.route)):
            return self.rt.ready_timeout
        return wait

    def provision(self) -> NodeInfo:
        """A READY node: in this zone, the next ones after stockouts, or the first of a fan-out."""
        node = FanOut(self).provision() if self.plan.fan_out else self._one_zone_at_a_time()
        self.emit(ev.Ready(len(node.endpoints), list(node.endpoints)))
        return node

    def _one_zone_at_a_time(self) -> NodeInfo:
        state, tried = self.state, []
        while True:
            tried.append(state.zone)
            try:
                return self.attempt(state.zone, state)
            except CreateFailed as err:
                d = diagnose(err, state.context(self.plan))
                # --zones' order from where this provision began (after a preemption, the
                # zone the node was in), else any zone offering the type.
                ahead = zones_from(self.plan.zones, tried[0]) if self.plan.zones else d.alternatives
                left = [z for z in ahead if z not in tried]
                if not (fails_over(self.plan) and d.kind == "stockout" and left):
                    raise
                self.emit(ev.ZoneFailover(state.zone, left[0], d.title))
                state.zone = left[0]

    def attempt(
        self, zone: str, state: LaunchState, cancelled: Callable[[], bool] | None = None
    ) -> NodeInfo:
        """:meth:`create_in`, its outcome remembered in the zone history."""
        try:
            node = self.create_in(zone, state, cancelled)
        except Exception as err:
            self._remember(zone, outcome_of(err, diagnose(err, state.context(self.plan))))
            raise
        self._remember(zone, attempts.READY)
        return node

    def _remember(self, zone: str, outcome: str) -> None:
        plan = self.plan
        self.history.record(
            attempts.Attempt(
                zone, plan.accelerator, plan.route, self.rt.cloud.backend, outcome, time.time()
            )
        )

    def create_in(
        self, zone: str, state: LaunchState, cancelled: Callable[[], bool] | None = None
    ) -> NodeInfo:
        """Create in ``zone`` and wait for READY, recording it in ``state`` (the launch's, or
        one request's of a fan-out, which ``cancelled`` ends when another wins)."""
        plan, rt = self.plan, self.rt
        stopped = cancelled or self.cancel.is_set
        req = NodeRequest(
            zone=zone,
            node_id=plan.node_name,
            slice=plan.slice,
            run_id=plan.run_id,
            metadata=dict(rt.ssh_metadata),
            spot=plan.route == "spot",
            cloud_platform_scope=plan.watchdog,
            service_account=plan.service_account,
            external_ips=not plan.internal_ips,
            queue_wait_s=self.queue_wait_s,
            owner=rt.owner,
            route=plan.route,
            max_run_s=int(plan.max_run * 60),
            via=plan.via,
        )
        queued = rt.cloud.queues(plan.route)
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
            rt.cloud.backend,
            plan.via,
        )
        self.cancel.check()
        if stopped():
            raise Cancelled("another zone's request was ready first")
        if queued:
            self._refuse_a_taken_name(zone)
        # Before the call: a crash now still leaves a trace (and how SSH logs in to it).
        rt.ledger.record("intent", resource, **({"login": rt.login.record()} if rt.login else {}))
        state.resource = resource
        self.emit(
            ev.ResourceExists(name, resource.kind, zone, plan.accelerator, plan.route, plan.run_id)
        )
        started = time.time()
        operation = self._create_checked(req, resource, name, state)
        rt.ledger.record("created", resource)
        state.created_at = started

        def on_state(status: str) -> None:
            # Nothing costs until READY: a node being made or a request waiting costs nothing.
            elapsed = round(time.time() - started, 1)
            self.emit(ev.Provisioning(status, elapsed, 0.0, zone, plan.route))

        # Flex-start waits for capacity first (--queue-wait), then --ready-timeout for the
        # VM; on Compute Engine both waits are the one instance's.
        queue_wait = 0.0 if probes(plan) else queue_wait_seconds(plan)
        try:
            ready_wait = rt.ready_timeout
            if queued:
                rt.cloud.wait_for_queued(
                    zone,
                    name,
                    on_state,
                    queue_wait or rt.ready_timeout,
                    rt.poll,
                    cancelled=stopped,
                )
                operation, on_state_node = None, None
            else:
                on_state_node = on_state
                ready_wait += queue_wait or 0.0
            node = rt.cloud.wait_for_node(
                zone,
                plan.node_name,
                operation,
                on_state_node,
                ready_wait,
                rt.poll,
                cancelled=stopped,
            )
        except CreateFailed:
            # A failed create (a stockout) may leave nothing or a broken node: clean either up
            # before trying elsewhere, so failover never leaves a trail.
            self.teardown(state)
            raise
        state.costing_since = time.time()
        self.emit(
            ev.BillingStarted(
                name,
                state.costing_since,
                cost.hourly(self.slice, plan.route, zone),
                zone,
                cost.at_most_hourly(self.slice, plan.route, zone),
                *cost.price_origin(self.slice, plan.route, zone),
            )
        )
        if len(node.endpoints) != self.slice.vms:
            raise RemoteError(
                f"{plan.accelerator} has {self.slice.vms} VMs but the node reports "
                f"{len(node.endpoints)} workers"
            )
        state.node = node
        # Its server-side identity: later commands touch only this very node, never another
        # that takes its name after it is gone.
        server = rt.cloud.identity_of(node)
        rt.ledger.record("created", resource, **identity(server.uid, server.create_time))
        return node

    def _refuse_a_taken_name(self, zone: str) -> None:
        """A queued request for a node whose name is taken is accepted, and fails only later,
        when Google comes to make the node: ask first, so that nothing is created (nor, after,
        deleted) for a name someone else holds. The answer is a create's 409, which says so."""
        from google.api_core import exceptions as gx

        name = self.plan.node_name
        if self.rt.cloud.get_node(zone, name) is not None:
            raise gx.Conflict(f"A node called {name} already exists in {zone}.")

    def _create_checked(
        self, req: NodeRequest, resource: Resource, qr_name: str, state: LaunchState
    ) -> object:
        """Call create; after a transient failure, retry only once ``get`` shows nothing exists.
        A call that made no connection (refused, DNS, connect timeout) was never sent: the
        intent is closed at once, nothing exists, and nothing is read over a network that is
        down."""
        from google.api_core import exceptions as gx

        rt, plan = self.rt, self.plan
        for attempt in range(3):
            try:
                if resource.kind == "queued":
                    rt.cloud.create_queued(req, qr_name, plan.route, int(plan.max_run * 60))
                    return None
                return rt.cloud.create_node(req, on_part=self._part_intent(resource))
            except Exception as err:
                if never_sent(err):  # no connection was made: nothing can exist
                    rt.ledger.record("gone", resource, never_created=True, never_sent=True)
                    state.resource = None
                    self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))
                    raise
                exists = self._exists(resource)
                if exists is True:  # the call went through although its answer was lost
                    return None
                if isinstance(err, gx.Conflict):
                    self._name_taken(resource, state, known_foreign=exists is False)
                    raise
                transient = isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests) and (
                    not isinstance(err, gx.ResourceExhausted)
                )
                if exists is False and transient and attempt < 2:
                    self.cancel.sleep(1.0 + attempt)
                    continue
                if exists is False:
                    rt.ledger.record("gone", resource, never_created=True)
                    state.resource = None
                    self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))
                raise
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _part_intent(self, resource: Resource) -> Callable[[Part], None]:
        """Each part of a resource made of parts (a Compute Engine slice: its workload policy,
        template and MIG), recorded before its create: every record lists the parts begun so
        far, each with its kind and where it lives (a region or a zone), so the ledger says
        what a crash between two creates left."""
        begun: list[dict[str, str]] = []

        def record(part: Part) -> None:
            where = "zone" if part.kind in ZONAL_PARTS else "region"
            begun.append({"kind": part.kind, where: part.zone, "name": part.name})
            self.rt.ledger.record("intent", resource, parts=list(begun))

        return record

    def went_away(self, stage: str, err: Exception) -> Exception | None:
        """Did the node go away under the failed step (preempted, deleted)? Then that is the
        news, not the broken command."""
        resource = self.state.resource
        queued = resource.name if resource and resource.kind == "queued" else None
        doing = f"during the {stage} step"
        return went_away(self.rt.cloud, self.state.zone, self.plan.node_name, queued, doing, err)

    def _exists(self, resource: Resource) -> bool | None:
        """After a failed create call: does *this run's* resource exist? None when we cannot
        tell. Something else holding the name (another run, another user, made by hand) is
        False: only labels naming this run make a resource ours."""
        try:
            labels = live_labels(self.rt.cloud, resource)
        except Exception:
            return None
        return labels is not None and is_instance(labels, resource)

    def _name_taken(self, resource: Resource, state: LaunchState, known_foreign: bool) -> None:
        """The create answered 409 and the resource holding the name is not ours (or we could
        not read it): a 409 never leads to a delete, so this launch owns nothing to tear down.

        When its labels were read, this run's instance never existed and the ledger says so;
        when they could not be, the intent stays open and ``status`` settles it later by labels.
        """
        if known_foreign:
            self.rt.ledger.record("gone", resource, never_created=True, name_taken=True)
        state.resource = None
        self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))


def outcome_of(err: BaseException, d: Diagnosis) -> str:
    """What a failed attempt says about the zone, for the history."""
    if isinstance(err, Cancelled):
        return attempts.CUT_SHORT
    if d.kind == "stockout":
        return attempts.NO_CAPACITY
    return attempts.QUOTA if d.kind == "quota" else attempts.ERROR
