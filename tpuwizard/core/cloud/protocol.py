"""The cloud the lifecycle talks to: a small protocol, of which :class:`TpuCloud` (the TPU API)
is one implementation and the tests' in-memory clouds are others.

The lifecycle, the ledger, teardown and ``status`` depend on this, never on the client module,
so every rule they follow (nothing deleted that is not ours, verified gone, what bills) is
tested against an in-memory implementation and holds for any backend that keeps the promises
written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.types import NodeInfo, NodeRequest, QueuedInfo
from tpuwizard.core.deadlines import READY_TIMEOUT_S


@dataclass(frozen=True)
class NodeIdentity:
    """The server-side identity of one instance: a name can be reused after a delete, this
    cannot. ``uid`` is "" where the API did not say; ``create_time`` is epoch seconds."""

    uid: str
    create_time: float | None


@dataclass(frozen=True)
class Surveyed:
    """A labelled survey of every zone at once: each zone's nodes (zones with none left out),
    and the zones (or regions) that could not be read, with why: those were not checked."""

    nodes: dict[str, list[NodeInfo]]
    unreachable: dict[str, str]
    failed: dict[str, Exception] = field(default_factory=dict)  # a zone's own list refused


@runtime_checkable
class SurveysEverywhere(Protocol):
    """A cloud that lists every zone's labelled nodes in one go (Compute Engine's aggregated
    lists); ``status`` and the leftover check then need no list of zones, nor a call a zone."""

    def survey_everywhere(self, labels: dict[str, str]) -> Surveyed: ...


@dataclass(frozen=True)
class Part:
    """One resource that a delete of another takes with it, billed with it as one: a queued
    request's node on the TPU API; on Compute Engine a MIG's VMs, template and policy."""

    # "node"; on Compute Engine also "instance-template" and "workload-policy", whose ``zone``
    # is their region (compute/slice_body.py)
    kind: str
    zone: str
    name: str


class Cloud(Protocol):
    """What creating, waiting for, finding and deleting our resources needs of a cloud.

    Two kinds of resource: a ``node`` (what runs the workers) and a ``queued`` request for one
    (a resource made of parts: deleting the request deletes the node it got, and both bill as
    one). Reads answer None for "not there"; any other failure raises, since "cannot tell" must
    never be taken for "gone" or "ours".
    """

    project: str
    backend: Backend  # which API this is: ``Backend.TPU_API`` or ``Backend.COMPUTE``

    def queues(self, route: str) -> bool:
        """Does ``route`` ask for its node through a queued request (:meth:`create_queued`)?
        On the TPU API spot and Flex-start do; on Compute Engine every route is one instance
        whose scheduling says spot or Flex-start, so none does."""
        ...

    # -- create and wait --------------------------------------------------------------------
    def create_node(
        self, req: NodeRequest, on_part: Callable[[Part], None] | None = None
    ) -> object:
        """Start creating a node; returns what :meth:`wait_for_node` takes as ``operation``.
        Never retried inside: after a failure whose outcome is unknown the caller reads.

        A node made of parts (a Compute Engine slice: policy, template, MIG) tells each part to
        ``on_part`` before its create call, here or during the wait, so the caller's ledger
        holds its intent first."""
        ...

    def create_queued(
        self, req: NodeRequest, qr_id: str, route: str, max_run_seconds: int | None = None
    ) -> None:
        """Ask for a node through a queued request ``qr_id`` (route spot, guaranteed or flex)."""
        ...

    def wait_for_node(
        self,
        zone: str,
        node_id: str,
        operation: object = None,
        on_state: Callable[[str], None] | None = None,
        timeout: float = READY_TIMEOUT_S,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> NodeInfo:
        """Until READY; raises CreateFailed at a dead end, WaitTimedOut after ``timeout``."""
        ...

    def wait_for_queued(
        self,
        zone: str,
        qr_id: str,
        on_state: Callable[[str], None] | None = None,
        timeout: float = 3600,
        poll: float = 2.0,
        cancelled: Callable[[], bool] | None = None,
    ) -> QueuedInfo:
        """Until the request is granted; raises CreateFailed with the cloud's reason."""
        ...

    # -- read -------------------------------------------------------------------------------
    def get_node(self, zone: str, node_id: str) -> NodeInfo | None: ...
    def get_queued(self, zone: str, qr_id: str) -> QueuedInfo | None: ...

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        """The zone's nodes whose labels include ``labels`` (ours: ``MANAGED_BY``)."""
        ...

    def list_queued(self, zone: str) -> list[QueuedInfo]: ...
    def list_zones(self) -> list[str]: ...

    # -- delete -----------------------------------------------------------------------------
    def delete_node(self, zone: str, node_id: str, timeout: float = 600) -> None:
        """Delete and wait for it to finish; already gone is fine."""
        ...

    def delete_queued(self, zone: str, qr_id: str, timeout: float = 600) -> None:
        """Delete the request and the node it got, and wait; already gone is fine."""
        ...

    def node_gone(self, zone: str, node_id: str) -> bool:
        """Verified gone: a read says not there *and* the zone's list no longer holds it."""
        ...

    def queued_gone(self, zone: str, qr_id: str) -> bool: ...

    def not_deletable_yet(self, err: BaseException) -> bool:
        """Was this delete refused only for now (the resource is still being made, or another
        operation on it is in progress), so that asking again later may succeed?"""
        ...

    # -- what things mean -------------------------------------------------------------------
    def bills_in_state(self, kind: str, state: str) -> bool:
        """Does a resource of ``kind`` cost money in ``state``? Unknown states bill."""
        ...

    def parts_of(
        self, kind: str, zone: str, name: str, node_id: str | None, accelerator: str | None = None
    ) -> list[Part]:
        """What deleting this resource also deletes: each must be verified gone before the
        whole is (teardown checks each part's labels first: a part's name may be another's).
        ``accelerator``: the type the ledger recorded, where known, so a cloud can tell a
        resource that has no parts without reading."""
        ...

    def part_labels(self, part: Part) -> dict[str, str] | None:
        """The labels of a part that is not a node (a template, a policy), None when it is gone:
        teardown reads them before it counts the part as ours and still there."""
        ...

    def part_gone(self, part: Part) -> bool:
        """A part that is not a node is verified gone."""
        ...

    def deadline_at(self, kind: str, zone: str, name: str) -> float | None:
        """When the cloud itself ends this resource (epoch seconds), read back from it: on the
        TPU API a Flex-start request's ``runDuration.terminationTime``; on Compute Engine an
        instance's ``terminationTimestamp``. None when the cloud sets none: the on-VM
        watchdog's deadline is tpuwizard's own, recorded in the ledger."""
        ...

    def identity_of(self, node: NodeInfo) -> NodeIdentity:
        """The node's server-side identity, recorded in the ledger once it is READY."""
        ...
