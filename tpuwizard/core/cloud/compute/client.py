"""ComputeCloud: the only place that talks to Compute Engine.

It reads through plain REST calls (compute/rest.py: importing ``google.cloud.compute_v1`` takes
seconds, and the leftover check and ``status`` only read), creates and deletes through that
library's REST clients (instances, zonal operations), made on first use, and implements the
``Cloud`` protocol over TPU VM instances: on Compute Engine every route is
one instance whose ``scheduling`` says spot or Flex-start, so there is no queued kind. Calls
are blocking: front ends run them in threads. Every call has a timeout; reads and deletes retry
429/503 with jittered backoff; creates are never retried blindly. Results are plain dataclasses,
so nothing outside this module handles protobufs.

The trap (compute-engine.md, "The Python client"): the client's extended operations
(``insert(...).result()``) poll through an operations client built for Google's default
endpoint whatever ``client_options`` say. So this module calls only ``insert_unary`` /
``delete_unary`` and polls with its own :class:`ZoneOperationsClient` on the same endpoint.

The endpoint comes from ``TPUWIZARD_COMPUTE_ENDPOINT`` when set, else ``TPUWIZARD_TPU_ENDPOINT``
(the sandbox serves both APIs on one port), else Google's; credentials as for the TPU API.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cached_property, partial
from typing import Any

from tpuwizard.core.cloud import google_errors
from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.cloud.compute import read as compute_read
from tpuwizard.core.cloud.compute import slice_body
from tpuwizard.core.cloud.compute import states as compute_states
from tpuwizard.core.cloud.compute.body import MACHINE_TYPES, accelerator_of, instance_body
from tpuwizard.core.cloud.compute.errors import (
    OperationError,
    operation_errors,
    raise_delete_errors,
)
from tpuwizard.core.cloud.compute.errors import resource_not_ready as _not_ready
from tpuwizard.core.cloud.compute.flex import PendingLimit
from tpuwizard.core.cloud.compute.read import label_filter, matching, node_info, parse_time
from tpuwizard.core.cloud.compute.rest import ComputeReads
from tpuwizard.core.cloud.compute.slice_body import is_single_vm
from tpuwizard.core.cloud.compute.slices import ComputeSlices, SliceBuild
from tpuwizard.core.cloud.compute.survey import survey_everywhere
from tpuwizard.core.cloud.endpoint import compute_endpoint
from tpuwizard.core.cloud.google_calls import at_once, credentials_for, quota_is_final, retry_reads
from tpuwizard.core.cloud.polling import pause, poll_until
from tpuwizard.core.cloud.protocol import NodeIdentity, Part, Surveyed
from tpuwizard.core.cloud.types import CALL_TIMEOUT, NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.deadlines import READY_TIMEOUT_S
from tpuwizard.core.errors import CreateFailed, WaitTimedOut
from tpuwizard.core.routes import Route

# zoneOperations.wait answers within about two minutes (compute.v1.json): a call may take that long.
OPERATION_WAIT_S = 120.0
# Statuses that end a wait for RUNNING: stopped, or on the way out (compute-engine.md).
_DEAD_ENDS = compute_states.STOPPED_STATES | {"REPAIRING", "DEPROVISIONING", "PENDING_STOP"}
# The machine types that carry TPUs, as the name filter of an aggregated list (a regex: eq).
_TPU_MACHINES = "|".join(sorted({m.rsplit("-", 1)[0] for m in MACHINE_TYPES.values()}))


class ComputeLibrary:
    """``google.cloud.compute_v1``, imported on the first name asked of it (a create, a delete):
    seconds that a survey, which only reads, never spends."""

    def __getattr__(self, name: str) -> Any:
        from google.cloud import compute_v1

        return getattr(compute_v1, name)


def rest_client(endpoint: str, credentials: Any, kind: Any) -> Any:
    """A google-cloud-compute client of ``kind`` over REST to ``endpoint``."""
    return kind(
        credentials=credentials, transport="rest", client_options={"api_endpoint": endpoint}
    )


class ComputeCloud:
    """The ``Cloud`` protocol on Compute Engine: TPU VM instances, waited on and deleted through
    this endpoint's zonal operations, and the "verified gone" checks."""

    backend = COMPUTE

    def __init__(
        self,
        project: str,
        endpoint: str | None = None,
        credentials: Any = None,
        timeout: float = CALL_TIMEOUT,
        retry_deadline: float = 60.0,
    ) -> None:
        self.project = project
        self.endpoint = compute_endpoint(endpoint)
        if credentials is None:
            credentials = credentials_for(self.endpoint)
        self.credentials = credentials
        self.timeout = timeout
        self.retry = retry_reads(retry_deadline)
        self.compute_v1: Any = ComputeLibrary()
        self.reads = ComputeReads(self.endpoint, project, credentials, timeout, self.retry)
        self._routes: dict[tuple[str, str], str] = {}  # (zone, name) -> route, for diagnoses
        self._pending: dict[tuple[str, str], PendingLimit] = {}  # Flex-start VMs' waits
        self.clock = time.monotonic  # the Flex-start waits' (a test's own)
        # Multi-host slices (a workload policy, a template, a MIG): a part, not a base class.
        # A partial, not this cloud's own method: a cycle through it kept every dropped
        # ComputeCloud (and its HTTP connections' sockets) until the next full collection.
        self._client = partial(rest_client, self.endpoint, credentials)
        self.slices = ComputeSlices(
            self.compute_v1, project, self._client, timeout, self.retry, reads=self.reads
        )

    @cached_property
    def instances(self) -> Any:
        """google-cloud-compute's instances client (creates and deletes), made on first use."""
        return self._client(self.compute_v1.InstancesClient)

    @cached_property
    def operations(self) -> Any:
        # Ours, on this endpoint: never the one the extended operations build (see above).
        return self._client(self.compute_v1.ZoneOperationsClient)

    def queues(self, route: str) -> bool:
        """No route queues: spot and Flex-start are the instance's own scheduling."""
        return False

    # -- catalog ----------------------------------------------------------------------------
    def list_zones(self) -> list[str]:
        """The zones where this project may create a TPU machine type: one aggregated list of
        machine types (not one call per zone); a server without that route (404) is asked for
        its zones instead."""
        from google.api_core import exceptions

        try:
            return sorted(self._tpu_machine_types())
        except exceptions.NotFound:
            return sorted(self.reads.zones())

    def accelerator_types(self, zone: str) -> list[str]:
        """The accelerator types Compute Engine offers in ``zone``, by its machine types."""
        return sorted({a for m in self.reads.machine_types(zone) if (a := accelerator_of(m))})

    def _tpu_machine_types(self) -> dict[str, list[str]]:
        listed = self.reads.machine_types_everywhere(f'name eq "({_TPU_MACHINES})-.*"')
        zones: dict[str, list[str]] = {}
        for scope, names in listed:
            found = [a for m in names if (a := accelerator_of(m))]
            if found:
                zones[scope.rsplit("/", 1)[-1]] = sorted(found)
        return zones

    # -- instances --------------------------------------------------------------------------
    def create_node(self, req: NodeRequest, on_part: Callable[[Part], None] | None = None) -> Any:
        """Start creating the instance (or, for a multi-host slice, its first part: each part
        is told to ``on_part`` before its insert); returns what :meth:`wait_for_node` takes.

        Not retried: if the call fails in a way that leaves its fate unknown, the caller checks
        with :meth:`get_node` (the ledger already holds the intent). The body is built first, so
        a request Compute Engine cannot take is refused before any call.
        """
        self._routes[(req.zone, req.node_id)] = req.route
        if not req.slice.single_host or slice_body.by_resize_request(req):
            slice_body.template_body(req)  # refused here, before any call, if it cannot be sent
            with quota_is_final():
                return self.slices.create(req, on_part)
        body = instance_body(req)
        if req.route == Route.FLEX:
            self._pending[(req.zone, req.node_id)] = PendingLimit.of(req, self.clock)
        instance = self.compute_v1.Instance.from_json(json.dumps(body))
        _ = self.operations  # made now: the wait's first poll follows the insert at once
        with quota_is_final():
            return self.instances.insert_unary(
                project=self.project,
                zone=req.zone,
                instance_resource=instance,
                timeout=self.timeout,
            )

    def _get_raw(self, zone: str, name: str) -> Any:
        return self.reads.instance(zone, name)

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        instance = self._get_raw(zone, node_id)
        if instance is None:  # a slice is named as its MIG, never as one of its VMs
            return self.slices.read.get(zone, node_id)
        return node_info(instance, zone)

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        """The zone's instances whose labels include ``labels``: Google filters, and the
        answer is checked here too (a filter it could not apply must not widen "ours")."""
        listed, parts = at_once(
            lambda: self.reads.instances(zone, label_filter(labels)),
            lambda: self.slices.read.listed(zone),  # the slices' parts, read beside the instances
        )
        slices, loose = self.slices.read.fold(zone, listed, parts)
        return matching([*slices, *(node_info(i, zone) for i in loose)], labels)

    def list_all_nodes(self, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        """Every zone's instances whose labels include ``labels``, in one aggregated list."""
        found = self.reads.instances_everywhere(label_filter(labels))
        return matching([node_info(i, scope.rsplit("/", 1)[-1]) for scope, i in found], labels)

    def survey_everywhere(self, labels: dict[str, str]) -> Surveyed:
        """Every zone's nodes as :meth:`list_nodes` finds them, each kind in one aggregated list."""
        return survey_everywhere(self.reads, self.slices.read, labels)

    def wait_for_node(
        self,
        zone: str,
        node_id: str,
        operation: Any = None,
        on_state: Callable[[str], None] | None = None,
        timeout: float = READY_TIMEOUT_S,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> NodeInfo:
        """Poll until the instance is RUNNING, reporting each status (PENDING included: a
        Flex-start create waiting for capacity).

        Raises :class:`CreateFailed` when the create operation ends in an error (diagnosed by
        its code: see :mod:`~tpuwizard.core.cloud.compute.errors`), and :class:`WaitTimedOut`
        when ``timeout`` passes.
        """
        if isinstance(operation, SliceBuild) or (
            operation is None and self._get_raw(zone, node_id) is None
        ):
            build = operation if isinstance(operation, SliceBuild) else None
            return self.slices.wait(zone, node_id, build, on_state, timeout, poll, cancelled)
        op_name = compute_read.operation_name(operation)
        done = op_name is None
        last: str | None = None
        spot = self._routes.get((zone, node_id)) == "spot"
        pending = self._pending.get((zone, node_id))

        def operation_failed() -> None:
            nonlocal done
            if done:
                return
            op = self._get_operation(zone, str(op_name))
            if compute_read.operation_status(op) != "DONE":
                return
            done = True
            errors = operation_errors(op)
            if errors:
                code = op.http_error_status_code or None
                failed = OperationError(op.name, errors, code, after=last, doing="create")
                raise CreateFailed(failed, route="spot" if spot else None)

        def read() -> NodeInfo | None:
            nonlocal last
            # The operation's error comes first: a failed create may delete the instance
            # (compute-engine.md, Reports), and "it is gone" is not the news.
            operation_failed()
            node = self.get_node(zone, node_id)
            if node is None:
                operation_failed()  # it may have ended between the two reads
            last = node.state if node is not None else last
            if pending is not None and node is not None:
                pending.check(node.state)  # PENDING past its queue wait + 5 min: given up
            return node

        def failure(node: NodeInfo | None, state: str) -> str | None:
            if state in _DEAD_ENDS:
                return f"the instance became {state} before it was running"
            if node is None and done:
                return "the instance disappeared while it was created"
            return None

        return poll_until(
            f"instance {node_id}",
            read,
            compute_states.READY_STATE,
            failure,
            on_state,
            timeout,
            poll,
            cancelled,
        )

    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        """Delete and wait for the operation; an instance that is already gone is fine."""
        from google.api_core import exceptions

        try:
            op = self.instances.delete_unary(
                project=self.project,
                zone=zone,
                instance=node_id,
                retry=self.retry,
                timeout=self.timeout,
            )
        except exceptions.NotFound:  # no instance of the name: a slice's parts, if any
            self.slices.delete(zone, node_id, timeout)
            return
        final = self._wait_operation(zone, op.name, f"delete of instance {node_id}", timeout)
        raise_delete_errors(final)

    def node_gone(self, zone: str, node_id: str) -> bool:
        """Verified: ``get`` says NotFound, the zone's list no longer holds it, and no part of
        a slice of the name is left (the three asked at once)."""
        found, listed, slice_gone = at_once(
            lambda: self._get_raw(zone, node_id),
            lambda: self.list_nodes(zone),
            lambda: self.slices.read.gone(zone, node_id),
        )
        return found is None and all(n.name != node_id for n in listed) and slice_gone

    # -- operations -------------------------------------------------------------------------
    def _get_operation(self, zone: str, name: str) -> Any:
        return self.operations.get(
            project=self.project,
            zone=zone,
            operation=name,
            retry=self.retry,
            timeout=self.timeout,
        )

    def _wait_operation(self, zone: str, name: str, what: str, timeout: float) -> Any:
        """Until the operation is DONE, through zoneOperations.wait: Google answers once it is
        done or after about two minutes (compute.v1.json), so a fast delete is seen at once
        and a slow one costs one call in two minutes, not one a second."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            op = self.operations.wait(
                project=self.project,
                zone=zone,
                operation=name,
                retry=self.retry,
                timeout=min(max(left, 1.0), OPERATION_WAIT_S) + self.timeout,
            )
            if compute_read.operation_status(op) == "DONE":
                return op
            if time.monotonic() >= deadline:
                raise WaitTimedOut(what, compute_read.operation_status(op), timeout)
            pause(0.5, None)  # an early answer (Google may return before DONE): not a busy loop

    # -- what things mean (the Cloud protocol) ---------------------------------------------
    def not_deletable_yet(self, err: BaseException) -> bool:
        """A delete refused while another operation on the instance runs: ask again later."""
        return _not_ready(err) or google_errors.not_deletable_yet(err)

    def bills_in_state(self, kind: str, state: str) -> bool:
        return compute_states.bills_in_state(kind, state)

    def parts_of(
        self, kind: str, zone: str, name: str, node_id: str | None, accelerator: str | None = None
    ) -> list[Part]:
        """A slice's VMs still listed, its template and its policy (a single-host instance is
        one resource, its boot disk with it). A slice's name reads as an instance's: unless the
        ``accelerator`` recorded is single-host, the parts are looked for (three reads)."""
        if kind != "node" or (accelerator is not None and is_single_vm(accelerator)):
            return []
        return self.slices.read.parts(zone, name)

    def part_labels(self, part: Part) -> dict[str, str] | None:
        return self.slices.read.part_labels(part)

    def part_gone(self, part: Part) -> bool:
        return self.slices.read.part_gone(part)

    def deadline_at(self, kind: str, zone: str, name: str) -> float | None:
        """``resourceStatus.scheduling.terminationTimestamp``, read back: when Google deletes
        the instance (None when it is gone, or Google cleared it: a stopped VM has none). A
        slice has none: each VM's ends it, but its MIG may make it again, so only tpuwizard's
        own teardown of the MIG ends a slice."""
        instance = self._get_raw(zone, name) if kind == "node" else None
        if instance is None:
            return None
        stamp = instance.resource_status.scheduling.termination_timestamp
        return parse_time(stamp) if stamp else None

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        """The instance's numeric ``id`` and its ``creationTimestamp``."""
        return NodeIdentity(node.uid, node.create_time)

    # The Cloud protocol's queued kind: Compute Engine has none (spot and Flex-start are the
    # instance's own scheduling), so nothing of the kind can exist here or be waited on.
    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        raise NotImplementedError("Compute Engine queues nothing: create_node takes every route")

    def wait_for_queued(
        self,
        zone: str,
        qr_id: str,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 3600,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> QueuedInfo:
        raise NotImplementedError("Compute Engine queues nothing: wait_for_node waits")

    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None:
        return None

    def list_queued(self, zone: str) -> list[QueuedInfo]:
        return []

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        return None

    def queued_gone(self, zone: str, qr_id: str) -> bool:
        return True
