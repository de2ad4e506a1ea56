"""One launch, from plan to verified teardown, as a stream of events.

``run_launch`` does the work in the calling thread and reports through ``emit``; ``events`` and
``async_events`` run it in a thread and hand the events to a front end. Teardown runs in a
``finally`` unless the plan says keep, so cancellation (a signal, Ctrl+Q, an exception) still tears
down: a front end that wants to stop sets the :class:`CancelToken` and keeps reading events until
``Finished``.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud.diagnose import Context, diagnose, preempted_diagnosis
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, RemoteError
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.ledger import Resource
from tpuwizard.core.launch.on_workers import WorkerSteps
from tpuwizard.core.launch.plan import (
    DEFAULT_MAX_RUN,
    EXIT_CLOUD,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_TEARDOWN,
    LaunchPlan,
)
from tpuwizard.core.launch.runtime import Runtime
from tpuwizard.core.launch.teardown import delete_and_verify
from tpuwizard.core.launch.watchdog import arm_watchdog
from tpuwizard.core.plan import cost
from tpuwizard.core.remote.transports import Transport


class Launch(WorkerSteps):
    """The steps of one launch. Private to this module: use :func:`run_launch`."""

    def __init__(
        self, plan: LaunchPlan, rt: Runtime, emit: Callable[[ev.Event], None], cancel: CancelToken
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.slice = plan.validate()
        self.zone = plan.zone
        self.resource: Resource | None = None
        self.node: NodeInfo | None = None
        self.versions: dict[int, dict] = {}
        self.checks: dict[int, dict[str, bool]] = {}
        self.created_at: float | None = None
        self.receipt_ok = False

    # -- steps ------------------------------------------------------------------------------
    def run(self) -> int:
        plan = self.plan
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
                cost.hourly(plan.accelerator, plan.route),
                self.max_run,
                self.rt.practice,
                str(plan.run_dir),
            )
        )
        code = EXIT_OK
        stage = "provision"
        try:
            node = self.provision()
            transport = self.rt.make_transport(node)
            stage = "connect"
            transport.wait_until_reachable(self.rt.reachable_timeout)
            self.emit(ev.SshReady(transport.workers))
            self.cancel.check()
            stage = "bootstrap"
            self.bootstrap(transport)
            if plan.watchdog:
                self.arm_watchdog(transport)
            stage = "verify"
            self.verify(transport)
            if plan.script is not None:
                stage = "script"
                self.run_script(transport)
            code = EXIT_OK if self.receipt_ok else EXIT_FAILED
        except Cancelled as err:
            self.emit(
                ev.Failed(
                    stage,
                    {
                        "kind": "cancelled",
                        "title": "Stopped",
                        "explanation": f"The launch was stopped ({err}).",
                        "next_steps": [],
                        "alternatives": [],
                    },
                )
            )
            code = EXIT_FAILED
        except Exception as err:  # every failure becomes a diagnosis, never a traceback
            d = diagnose(
                err,
                Context(
                    project=plan.project,
                    zone=self.zone,
                    accelerator=plan.accelerator,
                    name=plan.node_name,
                ),
            )
            if stage != "provision" and self._preempted():
                d = preempted_diagnosis(plan.route)
            self.emit(ev.Failed(stage, d.to_dict()))
            code = EXIT_CLOUD if stage in ("provision", "connect") else EXIT_FAILED
        finally:
            code = self.finish(code)
        return code

    @property
    def max_run(self) -> int:
        return self.plan.max_run_minutes or DEFAULT_MAX_RUN[self.plan.route]

    def provision(self) -> NodeInfo:
        tried = []
        while True:
            tried.append(self.zone)
            try:
                return self.create_in(self.zone)
            except CreateFailed as err:
                d = diagnose(
                    err,
                    Context(
                        project=self.plan.project, zone=self.zone, accelerator=self.plan.accelerator
                    ),
                )
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
            external_ips=not plan.internal_ips,
            queue_wait_s=rt.ready_timeout,
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
        )
        self.cancel.check()
        rt.ledger.record("intent", resource)  # before the call: a crash now still leaves a trace
        self.resource = resource
        started = time.time()
        operation = self._create_checked(req, resource, name)
        rt.ledger.record("created", resource)
        self.created_at = started

        def on_state(state: str) -> None:
            elapsed = time.time() - started
            self.emit(
                ev.Provisioning(
                    state, round(elapsed, 1), cost.estimate(plan.accelerator, plan.route, elapsed)
                )
            )

        try:
            if queued:
                rt.cloud.wait_for_queued(
                    zone, name, on_state, rt.ready_timeout, rt.poll, cancelled=self.cancel.is_set
                )
                node = rt.cloud.wait_for_node(
                    zone,
                    plan.node_name,
                    None,
                    None,
                    rt.ready_timeout,
                    rt.poll,
                    cancelled=self.cancel.is_set,
                )
            else:
                node = rt.cloud.wait_for_node(
                    zone,
                    plan.node_name,
                    operation,
                    on_state,
                    rt.ready_timeout,
                    rt.poll,
                    cancelled=self.cancel.is_set,
                )
        except CreateFailed:
            # A failed create (a stockout) may leave nothing or a broken node: clean either up
            # before trying elsewhere, so failover never leaves a trail.
            self.teardown()
            raise
        if len(node.endpoints) != self.slice.vms:
            raise RemoteError(
                f"{plan.accelerator} has {self.slice.vms} VMs but the node reports "
                f"{len(node.endpoints)} workers"
            )
        self.node = node
        self.emit(ev.Ready(len(node.endpoints), list(node.endpoints)))
        return node

    def _create_checked(self, req: NodeRequest, resource: Resource, qr_name: str) -> object:
        """Call create; after a transient failure, retry only once ``get`` shows nothing exists."""
        from google.api_core import exceptions as gx

        rt, plan = self.rt, self.plan
        for attempt in range(3):
            try:
                if resource.kind == "queued":
                    rt.cloud.create_queued(req, qr_name, plan.route, self.max_run * 60)
                    return None
                return rt.cloud.create_node(req)
            except Exception as err:
                exists = self._exists(resource)
                if exists is True:  # the call went through although its answer was lost
                    return None
                transient = isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests) and (
                    not isinstance(err, gx.ResourceExhausted)
                )
                if exists is False and transient and attempt < 2:
                    self.cancel.sleep(1.0 + attempt)
                    continue
                if exists is False:
                    rt.ledger.record("gone", resource, never_created=True)
                    self.resource = None
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
        arm_watchdog(transport, self.resource, deadline, self.rt.watchdog, self.emit)

    def _exists(self, resource: Resource) -> bool | None:
        """After a failed create call: does it exist? None when we cannot tell."""
        try:
            cloud = self.rt.cloud
            if resource.kind == "queued":
                return cloud.get_queued(resource.zone, resource.name) is not None
            node = cloud.get_node(resource.zone, resource.name)
            return node is not None and node.labels.get("tpuwizard-run") == resource.run_id
        except Exception:
            return None

    # -- the end ----------------------------------------------------------------------------
    def teardown(self) -> bool:
        resource = self.resource
        if resource is None:
            return True
        self.emit(ev.TeardownStarted(resource.name, resource.kind))
        result = delete_and_verify(
            self.rt.cloud, self.rt.ledger, resource, pause=min(2.0, self.rt.poll)
        )
        billed = time.time() - (self.created_at or time.time())
        if result.verified:
            self.emit(
                ev.TeardownVerified(
                    resource.name,
                    resource.kind,
                    round(billed, 1),
                    cost.estimate(resource.accelerator, resource.route, billed),
                )
            )
            self.resource = None
            return True
        d = result.diagnosis
        self.emit(ev.TeardownFailed(resource.name, resource.kind, d.to_dict() if d else {}))
        return False

    def finish(self, code: int) -> int:
        total = None
        if self.created_at is not None:
            total = cost.estimate(
                self.plan.accelerator, self.plan.route, time.time() - self.created_at
            )
        if self.resource is not None and self.plan.keep and not self.cancel.is_set():
            r = self.resource
            what = "queued-resources delete --force" if r.kind == "queued" else "tpu-vm delete"
            self.emit(
                ev.Kept(
                    r.name,
                    r.zone,
                    f"tpuwizard teardown {r.name}   (or: gcloud "
                    f"compute tpus {what} {r.name} --zone {r.zone})",
                )
            )
        elif not self.teardown():
            code = EXIT_TEARDOWN
        self._write_cost(total)
        self.emit(ev.Finished(code == EXIT_OK, code, str(self.plan.run_dir), total))
        return code

    def _write_cost(self, total: float | None) -> None:
        """The run's cost estimate, next to its receipt."""
        if self.created_at is None:
            return
        import json

        seconds = time.time() - self.created_at
        record = {
            "accelerator": self.plan.accelerator,
            "route": self.plan.route,
            "chips": self.slice.chips,
            "seconds": round(seconds, 1),
            "price_per_hour_usd": cost.hourly(self.plan.accelerator, self.plan.route),
            "cost_usd": total,
            "estimate": cost.label(),
            "practice": self.rt.practice,
        }
        (self.plan.run_dir / "cost.json").write_text(json.dumps(record, indent=2) + "\n")


def run_launch(
    plan: LaunchPlan,
    rt: Runtime,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken | None = None,
) -> int:
    """Run one launch in this thread; returns its exit code (0, 1, 3 or 4)."""
    return Launch(plan, rt, emit, cancel or CancelToken()).run()


def events(plan: LaunchPlan, rt: Runtime, cancel: CancelToken) -> Iterator[ev.Event]:
    """The launch's events, produced by a worker thread; ends after ``Finished``."""
    plan.validate()  # bad input fails here, in the caller, before any thread or cloud call
    q: queue.Queue[ev.Event | None] = queue.Queue()

    def work() -> None:
        try:
            run_launch(plan, rt, q.put, cancel)
        finally:
            q.put(None)

    # Not a daemon: if the front end dies, the process stays until teardown is done.
    thread = threading.Thread(target=work, name="tpuwizard-launch")
    thread.start()
    while (item := q.get()) is not None:
        yield item
    thread.join()


async def async_events(
    plan: LaunchPlan, rt: Runtime, cancel: CancelToken
) -> AsyncIterator[ev.Event]:
    """The same stream for asyncio front ends (the TUI)."""
    iterator = events(plan, rt, cancel)
    while True:
        item = await asyncio.to_thread(next, iterator, None)
        if item is None:
            return
        yield item
