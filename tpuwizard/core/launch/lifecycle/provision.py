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
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tpuwizard.core.cancel import Cancelled
from tpuwizard.core.cloud.compute.slice_body import MIG, REQUEST, VM
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.network_errors import never_sent
from tpuwizard.core.cloud.oslogin import LoginChoice
from tpuwizard.core.cloud.protocol import Cloud, Part
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, RemoteError
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.ending import held_event
from tpuwizard.core.launch.lifecycle.fan_out import FanOut, FanOutInput
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.vanished import went_away
from tpuwizard.core.launch.plan.zone_rules import zones_from
from tpuwizard.core.launch.records import attempts
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.records.ownership import identity, is_instance, live_labels
from tpuwizard.core.plan import cost
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.routes import Route

# The parts that live in a zone (a slice's VMs, its MIG, Route 2B's resize request); the rest
# (a template, a workload policy) in a region.
ZONAL_PARTS = (VM, MIG, REQUEST)


@dataclass(frozen=True)
class ProvisionInput:
    """What the provisioner reads of the plan and the runtime (lifecycle/part_inputs.py makes
    it): what to create, where, and the cloud and ledger it creates and records through."""

    # What is made: the names it is created and recorded under.
    project: str
    run_id: str
    accelerator: str  # as asked: the record and the events say it
    slice: Slice
    route: str
    node_name: str
    via: str
    about: Context  # the launch's names, for the diagnosis of a failed create
    # How: the create's settings.
    watchdog: bool  # asks the cloud-platform scope, which the on-VM watchdog deletes with
    service_account: str | None
    internal_ips: bool
    autocheckpoint: bool  # the node is created with Autocheckpoint (through v2alpha1)
    max_run_s: int  # the plan's --max-run, in seconds; the resume chain bounds each attempt's
    # Flex-start's wait for capacity: --queue-wait, zero for a probe; None on other routes.
    capacity_wait_s: float | None
    # Where: --zones' order (after a stockout, the next), and the plan's zone rules' answers.
    zones: tuple[str, ...]
    fails_over: bool  # a stockout moves on to the next zone
    fan_out: FanOutInput | None  # --fan-out: a request in every zone at once
    # The runtime's: the cloud, the ledger, and the create's metadata and waits.
    cloud: Cloud
    ledger: Ledger
    ssh_metadata: Mapping[str, str]
    owner: str | None  # the owner label every resource this install creates carries
    login: LoginChoice | None  # how SSH logs in, recorded with the create's intent
    ready_timeout: float
    poll: float
    practice: bool = False  # BillingStarted's words: practice bills nothing


class Provisioner:
    """Creates this launch's resource and waits for it, recording each step in ``state``."""

    def __init__(
        self,
        given: ProvisionInput,
        ctx: LaunchContext,
        teardown: Callable[[LaunchState], bool],
    ) -> None:
        self.given = given
        self.emit, self.cancel, self.state = ctx.emit, ctx.cancel, ctx.state
        self.teardown = teardown  # removes what a failed create may have left (of a state)
        self.history = attempts.AttemptHistory.beside(given.ledger)

    @property
    def queue_wait_s(self) -> float:
        """How long a queued request may wait for capacity (validUntilDuration; Compute
        Engine's requestValidForDuration): Flex-start's --queue-wait (zero for a probe: Compute
        Engine sends its least, 90 s), else the ready wait. The TPU API's queued request takes
        no zero (it would send no validUntilDuration, so wait forever): the ready wait there."""
        given = self.given
        wait = given.capacity_wait_s
        if wait is None or (wait == 0 and given.cloud.queues(given.route)):
            return given.ready_timeout
        return wait

    def provision(self) -> NodeInfo:
        """A READY node: in this zone, the next ones after stockouts, or the first of a fan-out."""
        fan_out = self.given.fan_out
        node = FanOut(fan_out, self).provision() if fan_out else self._one_zone_at_a_time()
        self.emit(ev.Ready(len(node.endpoints), list(node.endpoints)))
        return node

    def _one_zone_at_a_time(self) -> NodeInfo:
        state, tried = self.state, []
        while True:
            tried.append(state.zone)
            try:
                return self.attempt(state.zone, state)
            except CreateFailed as err:
                given = self.given
                d = diagnose(err, state.context(given.about))
                # --zones' order from where this provision began (after a preemption, the
                # zone the node was in), else any zone offering the type.
                ahead = zones_from(given.zones, tried[0]) if given.zones else d.alternatives
                left = [z for z in ahead if z not in tried]
                if not (given.fails_over and d.kind == "stockout" and left):
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
            self._remember(zone, outcome_of(err, diagnose(err, state.context(self.given.about))))
            raise
        self._remember(zone, attempts.READY)
        return node

    def _remember(self, zone: str, outcome: str) -> None:
        given = self.given
        self.history.record(
            attempts.Attempt(
                zone, given.accelerator, given.route, given.cloud.backend, outcome, time.time()
            )
        )

    def create_in(
        self, zone: str, state: LaunchState, cancelled: Callable[[], bool] | None = None
    ) -> NodeInfo:
        """Create in ``zone`` and wait for READY, recording it in ``state`` (the launch's, or
        one request's of a fan-out, which ``cancelled`` ends when another wins)."""
        given = self.given
        stopped = cancelled or self.cancel.is_set
        req = self._request(zone)
        queued = given.cloud.queues(given.route)
        name = f"{given.node_name}-qr" if queued else given.node_name
        resource = self._resource(zone, name, queued)
        self.cancel.check()
        if stopped():
            raise Cancelled("another zone's request was ready first")
        if queued:
            self._refuse_a_taken_name(zone)
        # Before the call: a crash now still leaves a trace (and how SSH logs in to it).
        login = {"login": given.login.record()} if given.login else {}
        given.ledger.record("intent", resource, **login)
        state.resource = resource
        self.emit(
            ev.ResourceExists(
                name, resource.kind, zone, given.accelerator, given.route, given.run_id
            )
        )
        started = time.time()
        operation = self._create_checked(req, resource, name, state)
        self._record("created", resource)
        state.created_at = started
        node = self._ready(zone, name, queued, operation, started, state, stopped)
        state.costing_since = time.time()
        self.emit(
            ev.BillingStarted(
                name,
                state.costing_since,
                cost.hourly(given.slice, given.route, zone),
                zone,
                cost.at_most_hourly(given.slice, given.route, zone),
                *cost.price_origin(given.slice, given.route, zone),
                given.practice,
            )
        )
        if len(node.endpoints) != given.slice.vms:
            raise RemoteError(
                f"{given.accelerator} has {given.slice.vms} VMs but the node reports "
                f"{len(node.endpoints)} workers"
            )
        state.node = node
        # Its server-side identity: later commands touch only this very node, never another
        # that takes its name after it is gone.
        server = given.cloud.identity_of(node)
        self._record("created", resource, **identity(server.uid, server.create_time))
        return node

    def _request(self, zone: str) -> NodeRequest:
        """What the cloud is asked to make in ``zone``: the launch's node, as planned."""
        given = self.given
        return NodeRequest(
            zone=zone,
            node_id=given.node_name,
            slice=given.slice,
            run_id=given.run_id,
            metadata=dict(given.ssh_metadata),
            spot=given.route == Route.SPOT,
            cloud_platform_scope=given.watchdog,
            service_account=given.service_account,
            external_ips=not given.internal_ips,
            autocheckpoint=given.autocheckpoint,
            queue_wait_s=self.queue_wait_s,
            owner=given.owner,
            route=given.route,
            max_run_s=given.max_run_s,
            via=given.via,
        )

    def _resource(self, zone: str, name: str, queued: bool) -> Resource:
        """The ledger's resource for it: the node, or the queued resource that makes it."""
        given = self.given
        return Resource(
            "queued" if queued else "node",
            given.project,
            zone,
            name,
            given.accelerator,
            given.run_id,
            given.route,
            given.node_name if queued else None,
            given.owner,
            given.cloud.backend,
            given.via,
        )

    def _ready(
        self,
        zone: str,
        name: str,
        queued: bool,
        operation: object,
        started: float,
        state: LaunchState,
        stopped: Callable[[], bool],
    ) -> NodeInfo:
        """Wait for the node made in ``zone`` to be READY (a queued resource's first, for its
        capacity); a create that fails is cleaned up before the failure is raised."""
        given = self.given

        def on_state(status: str) -> None:
            # Nothing costs until READY: a node being made or a request waiting costs nothing.
            elapsed = round(time.time() - started, 1)
            self.emit(ev.Provisioning(status, elapsed, 0.0, zone, given.route))

        # Flex-start waits for capacity first (--queue-wait), then --ready-timeout for the
        # VM; on Compute Engine both waits are the one instance's.
        queue_wait = given.capacity_wait_s
        try:
            ready_wait = given.ready_timeout
            if queued:
                given.cloud.wait_for_queued(
                    zone,
                    name,
                    on_state,
                    queue_wait or given.ready_timeout,
                    given.poll,
                    cancelled=stopped,
                )
                operation, on_state_node = None, None
            else:
                on_state_node = on_state
                ready_wait += queue_wait or 0.0
            node = given.cloud.wait_for_node(
                zone,
                given.node_name,
                operation,
                on_state_node,
                ready_wait,
                given.poll,
                cancelled=stopped,
            )
        except CreateFailed:
            # A failed create (a stockout) may leave nothing or a broken node: clean either up
            # before trying elsewhere, so failover never leaves a trail.
            self.teardown(state)
            raise
        return node

    def _record(self, op: str, resource: Resource, **extra: object) -> None:
        """A record after the intent: one this computer's disk refuses is held and said, and
        the launch goes on (its intent, on disk, already names the resource)."""
        held = self.given.ledger.record(op, resource, **extra)
        if held is not None:
            self.emit(held_event(resource.name, op, held))

    def _refuse_a_taken_name(self, zone: str) -> None:
        """A queued request for a node whose name is taken is accepted, and fails only later,
        when Google comes to make the node: ask first, so that nothing is created (nor, after,
        deleted) for a name someone else holds. The answer is a create's 409, which says so."""
        from google.api_core import exceptions as gx

        name = self.given.node_name
        if self.given.cloud.get_node(zone, name) is not None:
            raise gx.Conflict(f"A node called {name} already exists in {zone}.")

    def _create_checked(
        self, req: NodeRequest, resource: Resource, qr_name: str, state: LaunchState
    ) -> object:
        """Call create; after a transient failure, retry only once ``get`` shows nothing exists.
        A call that made no connection (refused, DNS, connect timeout) was never sent: the
        intent is closed at once, nothing exists, and nothing is read over a network that is
        down."""
        from google.api_core import exceptions as gx

        given = self.given
        for attempt in range(3):
            try:
                if resource.kind == "queued":
                    given.cloud.create_queued(req, qr_name, given.route, given.max_run_s)
                    return None
                return given.cloud.create_node(req, on_part=self._part_intent(resource))
            except Exception as err:
                if never_sent(err):  # no connection was made: nothing can exist
                    self._record("gone", resource, never_created=True, never_sent=True)
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
                    self._record("gone", resource, never_created=True)
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
            self.given.ledger.record("intent", resource, parts=list(begun))

        return record

    def went_away(self, stage: str, err: Exception) -> Exception | None:
        """Did the node go away under the failed step (preempted, deleted)? Then that is the
        news, not the broken command."""
        resource = self.state.resource
        queued = resource.name if resource and resource.kind == "queued" else None
        doing = f"during the {stage} step"
        cloud, node_name = self.given.cloud, self.given.node_name
        return went_away(cloud, self.state.zone, node_name, queued, doing, err)

    def _exists(self, resource: Resource) -> bool | None:
        """After a failed create call: does *this run's* resource exist? None when we cannot
        tell. Something else holding the name (another run, another user, made by hand) is
        False: only labels naming this run make a resource ours."""
        try:
            labels = live_labels(self.given.cloud, resource)
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
            self._record("gone", resource, never_created=True, name_taken=True)
        state.resource = None
        self.emit(ev.CreateRefused(resource.name, resource.kind, resource.zone))


def outcome_of(err: BaseException, d: Diagnosis) -> str:
    """What a failed attempt says about the zone, for the history."""
    if isinstance(err, Cancelled):
        return attempts.CUT_SHORT
    if d.kind == "stockout":
        return attempts.NO_CAPACITY
    return attempts.QUOTA if d.kind == "quota" else attempts.ERROR
