"""Multi-host slices on Compute Engine, a part :class:`ComputeCloud` holds: a regional workload
policy, a regional instance template and a zonal BULK MIG (compute/slice_body.py), made in that
order, waited on until the topology is ACTIVE, deleted in reverse. The course's Route 2B (``--via
resize-request``) is the same graph without the policy, its VM asked for by a resize request
(compute/resize.py) instead of a resize.

``create`` starts the first part only; ``wait`` drives the rest (each part once the one before
it is DONE), so a failure at any step is a :class:`CreateFailed` of the wait, which the launch
answers by deleting what exists. Each part is announced through ``on_part`` before its insert
(the ledger's intent first). As in compute/client.py, only ``*_unary`` calls, polled through our own
operations clients on the same endpoint; reads and deletes retry 429/503; inserts never retry.

A slice is one node to the rest of tpuwizard, named as its MIG: its VMs (carrying
:data:`SLICE_LABEL`) are folded into it; parts a crash left without a MIG are listed in state
:data:`PARTS_LEFT`, and the slice's own delete (of whichever parts exist) ends them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.body import queue_wait_seconds
from tpuwizard.core.cloud.compute.errors import (
    OperationError,
    capacity_refused,
    operation_errors,
    raise_delete_errors,
)
from tpuwizard.core.cloud.compute.operation_wait import status_of, wait_operation
from tpuwizard.core.cloud.compute.resize import ResizeRequestPart
from tpuwizard.core.cloud.compute.rest import ComputeReads
from tpuwizard.core.cloud.compute.slice_reads import (
    PARTS_LEFT,
    TOPOLOGY_DEAD_ENDS,
    SliceReads,
    degraded,
    mig_is_ours,
)
from tpuwizard.core.cloud.polling import poll_until
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, QueueExpired
from tpuwizard.core.routes import Route

# What the wait reports while a part is made: nothing bills yet (compute_states).
BUILD_STATES = {
    body.POLICY: "CREATING_POLICY",
    body.TEMPLATE: "CREATING_TEMPLATE",
    body.MIG: "CREATING_MIG",
    "resize": "RESIZING",
    body.REQUEST: "REQUESTING",
    "done": "RESIZING",
}
# The steps, in order: bulk mode (a slice), or the course's Route 2B (one VM by resize request).
BULK_STEPS = (body.POLICY, body.TEMPLATE, body.MIG, "resize")
REQUEST_STEPS = (body.TEMPLATE, body.MIG, body.REQUEST)


@dataclass
class SliceBuild:
    """A slice being made: the request, the step reached, and that step's operation."""

    req: NodeRequest
    on_part: Callable[[Part], None]
    step: str  # the part whose operation runs: one of its steps, then "done"
    operation: str
    steps_done: list[str] = field(default_factory=list)
    resized_at: float | None = None  # when the VMs were asked for (the slices' clock)
    capacity_error: OperationError | None = None  # Flex-start: the MIG's last try, waited on

    @property
    def flex(self) -> bool:
        return self.req.route == Route.FLEX

    @property
    def steps(self) -> tuple[str, ...]:
        return REQUEST_STEPS if body.by_resize_request(self.req) else BULK_STEPS


class ComputeSlices:
    """The three resource kinds of a slice: read through ``reads`` (plain REST: SliceReads),
    made and deleted through this endpoint's clients of google-cloud-compute, each made on
    first use."""

    def __init__(
        self,
        compute_v1: Any,
        project: str,
        client: Callable[[Any], Any],
        timeout: float,
        retry: Any,
        clock: Callable[[], float] = time.monotonic,
        *,
        reads: ComputeReads,
    ) -> None:
        self.v1, self.project = compute_v1, project
        self.timeout, self.retry = timeout, retry
        self.clock = clock  # the Flex-start queue wait's (a test's own clock)
        self.read = SliceReads(reads)  # every read of a part: plain REST, never the clients
        self._client = client
        self.building: dict[tuple[str, str], SliceBuild] = {}  # by (zone, name), this process's

    # The clients, for creates, deletes and their operations: made (and google-cloud-compute
    # imported) on first use, never by a read.
    @cached_property
    def policies(self) -> Any:
        return self._client(self.v1.ResourcePoliciesClient)

    @cached_property
    def templates(self) -> Any:
        return self._client(self.v1.RegionInstanceTemplatesClient)

    @cached_property
    def migs(self) -> Any:
        return self._client(self.v1.InstanceGroupManagersClient)

    @cached_property
    def region_operations(self) -> Any:
        return self._client(self.v1.RegionOperationsClient)

    @cached_property
    def zone_operations(self) -> Any:
        return self._client(self.v1.ZoneOperationsClient)

    @cached_property
    def requests(self) -> ResizeRequestPart:
        """Route 2B's resize requests, asked for, checked while awaited, cancelled, deleted."""
        client = self._client(self.v1.InstanceGroupManagerResizeRequestsClient)
        waited = lambda zone, op, timeout: self._wait_operation(zone, op, False, timeout)  # noqa: E731
        return ResizeRequestPart(self.v1, client, self._call, waited)

    def _call(self, method: Any, retried: bool = True, **kw: Any) -> Any:
        extra = {"retry": self.retry} if retried else {}
        return method(project=self.project, timeout=self.timeout, **extra, **kw)

    # -- create -----------------------------------------------------------------------------
    def create(self, req: NodeRequest, on_part: Callable[[Part], None] | None) -> SliceBuild:
        """Announce and insert the first part (the workload policy; Route 2B's template); the
        wait inserts the rest."""
        build = SliceBuild(req, on_part or (lambda part: None), "", "")
        # Kept before the insert: if its answer is lost, the launch finds the part and waits
        # with no operation, and the wait goes on from this build.
        self.building[(req.zone, req.node_id)] = build
        self._start(build, build.steps[0])
        return build

    def _start(self, build: SliceBuild, step: str) -> None:
        """Announce ``step``'s part (before its insert: the ledger's intent first) and send it."""
        req = build.req
        zone, region = req.zone, body.region_of(req.zone)
        call, v1 = self._call, self.v1
        build.step, build.operation = step, ""  # until the insert answers
        if step == body.POLICY:
            build.on_part(Part(body.POLICY, region, body.policy_name(req.node_id)))
            policy = v1.ResourcePolicy.from_json(json.dumps(body.policy_body(req)))
            op = call(
                self.policies.insert_unary, False, region=region, resource_policy_resource=policy
            )
        elif step == body.TEMPLATE:
            build.on_part(Part(body.TEMPLATE, region, body.template_name(req.node_id)))
            template = v1.InstanceTemplate.from_json(json.dumps(body.template_body(req)))
            op = call(
                self.templates.insert_unary,
                False,
                region=region,
                instance_template_resource=template,
            )
        elif step == body.MIG:
            build.on_part(Part(body.MIG, zone, req.node_id))
            mig = v1.InstanceGroupManager.from_json(json.dumps(body.mig_body(req, self.project)))
            op = call(self.migs.insert_unary, False, zone=zone, instance_group_manager_resource=mig)
        elif step == body.REQUEST:
            build.on_part(Part(body.REQUEST, zone, body.request_name(req.node_id)))
            op = self.requests.ask(req)
            build.resized_at = self.clock()
        else:  # "resize": the BULK MIG to the slice's VMs
            vms = req.slice.vms
            op = call(
                self.migs.resize_unary,
                False,
                zone=zone,
                instance_group_manager=req.node_id,
                size=vms,
            )
            build.resized_at = self.clock()
        build.step, build.operation = step, op.name

    def _advance(self, build: SliceBuild) -> bool:
        """One look at the running step: the next part once it is DONE; True when the last
        step is done. Raises CreateFailed with the operation's errors."""
        req = build.req
        if build.step == "done":
            return True
        regional = build.step in (body.POLICY, body.TEMPLATE)
        where = body.region_of(req.zone) if regional else req.zone
        # No operation: the insert's answer was lost and the launch found the part there.
        op = self._get_operation(where, build.operation, regional) if build.operation else None
        if op is not None and status_of(op) != "DONE":
            return False
        errors = operation_errors(op) if op is not None else []
        if op is not None and errors:
            failed = OperationError(op.name, errors, op.http_error_status_code or None)
            raise CreateFailed(failed, route=req.route if req.route == Route.SPOT else None)
        build.steps_done.append(build.step)
        index = build.steps.index(build.step) + 1
        if index == len(build.steps):
            build.step = "done"
            return True
        self._start(build, build.steps[index])
        return False

    # -- wait -------------------------------------------------------------------------------
    def wait(
        self,
        zone: str,
        name: str,
        build: SliceBuild | None,
        on_state: Callable[[str], None] | None,
        timeout: float,
        poll: float,
        cancelled: Callable[[], bool] | None,
    ) -> NodeInfo:
        """Until the topology is ACTIVE and every managed instance RUNNING with an address."""
        build = build or self.building.get((zone, name))

        def read() -> NodeInfo | None:
            if build is not None and not self._advance(build):
                return NodeInfo(name, zone, build.req.accelerator_type, BUILD_STATES[build.step])
            node = self.read.get(zone, name)
            if node is not None and node.state in TOPOLOGY_DEAD_ENDS:
                raise CreateFailed(degraded(name, node.state, zone))
            self._instance_failures(zone, name, build)
            if build is not None and body.by_resize_request(build.req):  # FAILED: raised
                build.capacity_error = self.requests.check(zone, name) or build.capacity_error
            if node is None or node.state != "RUNNING":
                self._queue_wait_over(build, node)
                return node
            # Every VM of the slice RUNNING with an address, or it is not ready yet.
            expected = build.req.slice.vms if build else _vms_of(node.accelerator_type)
            if len(node.endpoints) != expected or not all(node.endpoints):
                self._queue_wait_over(build, node)
                return replace(node, state="ACTIVATING")
            return node

        def failure(node: NodeInfo | None, state: str) -> str | None:
            if node is None or state == PARTS_LEFT:
                return "the slice's MIG disappeared while it was created"
            return None

        return poll_until(
            f"slice {name}", read, "RUNNING", failure, on_state, timeout, poll, cancelled
        )

    def _instance_failures(self, zone: str, name: str, build: SliceBuild | None) -> None:
        """A managed instance whose last attempt failed (no capacity, quota): the create's
        error, as the operation would have said it. A Flex-start slice waits out no capacity:
        in bulk mode "the MIG waits until all VMs can be created at the same time"
        (compute.v1.json, targetSizePolicy), until its queue wait is over."""
        for managed in self._managed(zone, name):
            errors = managed.last_attempt.errors.errors if managed.last_attempt.errors else []
            if errors:
                found = [{"code": e.code, "message": e.message} for e in errors]
                failed = OperationError(f"{name}/{managed.name}", found)
                if build is not None and build.flex and capacity_refused(failed):
                    build.capacity_error = failed
                    continue
                raise CreateFailed(failed)

    def _queue_wait_over(self, build: SliceBuild | None, node: NodeInfo | None) -> None:
        """A Flex-start slice not whole when its queue wait (--queue-wait; Google bounds a BULK
        MIG's wait by nothing) is over: QueueExpired, which the launch answers by deleting the
        MIG, the template and the policy, each verified gone."""
        if build is None or not build.flex or build.resized_at is None:
            return
        wait_s = queue_wait_seconds(build.req.queue_wait_s)
        waited = self.clock() - build.resized_at
        if waited < wait_s:
            return
        state = node.state if node is not None else "NOT_FOUND"
        why: Exception = build.capacity_error or RuntimeError(
            f"the slice {build.req.node_id} was still {state} after {waited:.0f} s"
        )
        bound = f"tpuwizard's --queue-wait of {wait_s / 60:g} min: Google bounds a MIG's by none"
        raise QueueExpired(build.req.node_id, state, waited, why, "flex", bound)

    def _managed(self, zone: str, name: str) -> list[Any]:
        return self._list(self.migs.list_managed_instances, zone=zone, instance_group_manager=name)

    def _read(self, method: Any, **kw: Any) -> Any:
        from google.api_core import exceptions

        try:
            return self._call(method, **kw)
        except exceptions.NotFound:
            return None

    def _list(self, method: Any, **kw: Any) -> list[Any]:
        """A list; a server that does not serve the route (404) has none of the kind."""
        from google.api_core import exceptions

        try:
            return list(self._call(method, **kw))
        except exceptions.NotFound:
            return []

    # -- delete -----------------------------------------------------------------------------
    def delete(self, zone: str, name: str, timeout: float) -> None:
        """The MIG (its VMs with it, never one by one: it would recreate them), then the
        template, then the policy, each waited on; a part already gone is fine."""
        region = body.region_of(zone)
        mine = mig_is_ours(self._read(self.migs.get, zone=zone, instance_group_manager=name), name)
        if mine:  # a MIG of the name not ours is never touched; its requests before it
            self.requests.cancel_and_delete(zone, name, timeout)
        template, policy = body.template_name(name), body.policy_name(name)
        steps = [
            (self.migs.delete_unary, zone, False, {"instance_group_manager": name}),
            (self.templates.delete_unary, region, True, {"instance_template": template}),
            (self.policies.delete_unary, region, True, {"resource_policy": policy}),
        ][0 if mine else 1 :]
        for method, where, regional, kw in steps:
            scope = {"region": where} if regional else {"zone": where}
            op = self._read(method, **scope, **kw)
            if op is None:
                continue
            final = self._wait_operation(where, op.name, regional, timeout)
            raise_delete_errors(final)

    # -- operations -------------------------------------------------------------------------
    def _get_operation(self, where: str, name: str, regional: bool) -> Any:
        if regional:
            return self._call(self.region_operations.get, region=where, operation=name)
        return self._call(self.zone_operations.get, zone=where, operation=name)

    def _wait_operation(self, where: str, name: str, regional: bool, timeout: float) -> Any:
        client = self.region_operations if regional else self.zone_operations
        scope = {"region": where} if regional else {"zone": where}
        return wait_operation(client, self.project, scope, name, timeout, self.retry, self.timeout)


def _vms_of(accelerator: str) -> int:
    """The VMs of a slice as Google's answer names its type (a node read back: an edge)."""
    from tpuwizard.core.plan import catalog

    return catalog.parse_accelerator(accelerator).vms
