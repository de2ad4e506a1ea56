"""Multi-host slices on Compute Engine, a part :class:`ComputeCloud` holds: the graph of a
regional workload policy, a regional instance template and a zonal MIG (compute_slice_body.py),
created in that order, waited on until the topology is ACTIVE, and deleted in reverse.

``create`` starts the first part only; ``wait`` drives the rest (each part once the one before
it is DONE), so a failure at any step is a :class:`CreateFailed` of the wait, which the launch
already answers by deleting what exists. Each part is announced through ``on_part`` before its
insert, so the launch's ledger holds its intent first. As in compute.py, only ``*_unary`` calls,
polled through our own regional and zonal operations clients on the same endpoint; reads and
deletes retry 429/503; inserts never retry.

A slice is one node to the rest of tpuwizard, named as its MIG: its VMs (which carry
:data:`SLICE_LABEL`) are folded into it, and when a crash left only a template or a policy, the
slice is still listed, in state :data:`PARTS_LEFT`, so that ``status`` shows it and the slice's
own delete (which deletes whichever parts exist) ends it: no kind of resource is new to the
ledger or to teardown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from tpuwizard.core.cloud import compute_slice_body as body
from tpuwizard.core.cloud.compute_body import queue_wait_seconds
from tpuwizard.core.cloud.compute_errors import (
    OperationError,
    capacity_refused,
    operation_errors,
    raise_delete_errors,
)
from tpuwizard.core.cloud.compute_rest import ComputeReads
from tpuwizard.core.cloud.compute_slice_read import PARTS_LEFT, TOPOLOGY_DEAD_ENDS, degraded
from tpuwizard.core.cloud.compute_slice_reads import SliceReads
from tpuwizard.core.cloud.polling import pause, poll_until
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest
from tpuwizard.core.errors import CreateFailed, QueueExpired, WaitTimedOut

OPERATION_WAIT_S = 120.0
# What the wait reports while a part is made: nothing bills yet (compute_states).
BUILD_STATES = {
    body.POLICY: "CREATING_POLICY",
    body.TEMPLATE: "CREATING_TEMPLATE",
    body.MIG: "CREATING_MIG",
    "resize": "RESIZING",
    "done": "RESIZING",
}


@dataclass
class SliceBuild:
    """A slice being made: the request, the step reached, and that step's operation."""

    req: NodeRequest
    on_part: Callable[[Part], None]
    step: str  # the part whose operation runs: body.POLICY, TEMPLATE, MIG, then "resize"
    operation: str
    steps_done: list[str] = field(default_factory=list)
    resized_at: float | None = None  # when the resize was sent (the slices' clock)
    capacity_error: OperationError | None = None  # Flex-start: the MIG's last try, waited on

    @property
    def flex(self) -> bool:
        return self.req.route == "flex"


class ComputeSlices(SliceReads):
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
        super().__init__(reads)
        self._client = client

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

    def _call(self, method: Any, retried: bool = True, **kw: Any) -> Any:
        extra = {"retry": self.retry} if retried else {}
        return method(project=self.project, timeout=self.timeout, **extra, **kw)

    # -- create -----------------------------------------------------------------------------
    def create(self, req: NodeRequest, on_part: Callable[[Part], None] | None) -> SliceBuild:
        """Announce and insert the workload policy; the wait inserts the rest."""
        tell = on_part or (lambda part: None)
        region = body.region_of(req.zone)
        tell(Part(body.POLICY, region, body.policy_name(req.node_id)))
        resource = self.v1.ResourcePolicy.from_json(json.dumps(body.policy_body(req)))
        op = self._call(
            self.policies.insert_unary, False, region=region, resource_policy_resource=resource
        )
        return SliceBuild(req, tell, body.POLICY, op.name)

    def _advance(self, build: SliceBuild) -> bool:
        """One look at the running step: the next part once it is DONE; True when the resize
        is done. Raises CreateFailed with the operation's errors."""
        req = build.req
        zone, region = req.zone, body.region_of(req.zone)
        if build.step == "done":
            return True
        regional = build.step in (body.POLICY, body.TEMPLATE)
        op = self._get_operation(region if regional else zone, build.operation, regional)
        if _status(op) != "DONE":
            return False
        errors = operation_errors(op)
        if errors:
            failed = OperationError(op.name, errors, op.http_error_status_code or None)
            raise CreateFailed(failed, route=req.route if req.route == "spot" else None)
        build.steps_done.append(build.step)
        if build.step == body.POLICY:
            build.on_part(Part(body.TEMPLATE, region, body.template_name(req.node_id)))
            template = self.v1.InstanceTemplate.from_json(json.dumps(body.template_body(req)))
            op = self._call(
                self.templates.insert_unary,
                False,
                region=region,
                instance_template_resource=template,
            )
            build.step = body.TEMPLATE
        elif build.step == body.TEMPLATE:
            build.on_part(Part(body.MIG, zone, req.node_id))
            mig = self.v1.InstanceGroupManager.from_json(
                json.dumps(body.mig_body(req, self.project))
            )
            op = self._call(
                self.migs.insert_unary, False, zone=zone, instance_group_manager_resource=mig
            )
            build.step = body.MIG
        elif build.step == body.MIG:
            vms = _vms_of(req.accelerator_type)
            op = self._call(
                self.migs.resize_unary,
                False,
                zone=zone,
                instance_group_manager=req.node_id,
                size=vms,
            )
            build.step = "resize"
            build.resized_at = self.clock()
        else:
            build.step = "done"
            return True
        build.operation = op.name
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

        def read() -> NodeInfo | None:
            if build is not None and not self._advance(build):
                return NodeInfo(name, zone, build.req.accelerator_type, BUILD_STATES[build.step])
            node = self.get(zone, name)
            if node is not None and node.state in TOPOLOGY_DEAD_ENDS:
                raise CreateFailed(degraded(name, node.state, zone))
            self._instance_failures(zone, name, build)
            if node is None or node.state != "RUNNING":
                self._queue_wait_over(build, node)
                return node
            # Every VM of the slice RUNNING with an address, or it is not ready yet.
            expected = _vms_of(build.req.accelerator_type if build else node.accelerator_type)
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
        steps = (
            (self.migs.delete_unary, zone, False, {"instance_group_manager": name}),
            (
                self.templates.delete_unary,
                region,
                True,
                {"instance_template": body.template_name(name)},
            ),
            (self.policies.delete_unary, region, True, {"resource_policy": body.policy_name(name)}),
        )
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
        deadline = time.monotonic() + timeout
        client = self.region_operations if regional else self.zone_operations
        scope = {"region": where} if regional else {"zone": where}
        while True:
            left = deadline - time.monotonic()
            op = client.wait(
                project=self.project,
                operation=name,
                retry=self.retry,
                timeout=min(max(left, 1.0), OPERATION_WAIT_S) + self.timeout,
                **scope,
            )
            if _status(op) == "DONE":
                return op
            if time.monotonic() >= deadline:
                raise WaitTimedOut(f"operation {name}", _status(op), timeout)
            pause(0.5, None)


def _vms_of(accelerator: str) -> int:
    from tpuwizard.core.plan import catalog

    return catalog.parse_accelerator(accelerator).vms


def _status(op: Any) -> str:
    return str(getattr(op.status, "name", op.status))
