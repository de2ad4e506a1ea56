"""Plain data about TPU resources: what to create and what the API said exists.

Nothing outside ``tpuwizard.core.cloud.tpu.client`` handles protobufs: these are what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tpuwizard.core.plan import catalog

CALL_TIMEOUT = 30.0
MANAGED_BY = {"managed-by": "tpuwizard"}
RUN_LABEL = "tpuwizard-run"
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# Who made it: a label-safe hash of the creating install's id (tpuwizard.core.paths.owner_label).
OWNER_LABEL = "tpuwizard-owner"


UP_STATES = frozenset({"READY", "RUNNING"})


@dataclass(frozen=True)
class NodeInfo:
    name: str  # the node id, e.g. "tpuwizard-20261129-1525-ab12"
    zone: str
    accelerator_type: str
    state: str  # "CREATING", "READY", ...
    labels: dict[str, str] = field(default_factory=dict)
    create_time: float | None = None  # seconds since the epoch
    endpoints: tuple[str, ...] = ()  # each worker's internal address, worker i at index i
    queued_resource: str | None = None
    spot: bool = False
    # Each worker's external address, aligned with ``endpoints``; "" where it has none (Google
    # gives external addresses only when the create asked for them).
    external_ips: tuple[str, ...] = ()
    uid: str = ""  # the API's numeric node id (gcloud keys SSH host keys by it)
    flex: bool = False  # a Compute Engine instance whose provisioningModel is FLEX_START
    # A resource made of parts (a Compute Engine slice), each in words as status shows them:
    # ("MIG", "4 VMs", "template", "policy"), read with it; empty for a resource of one part.
    parts: tuple[str, ...] = ()

    @property
    def up(self) -> bool:
        """Its VMs are running: READY on the TPU API, RUNNING on Compute Engine (neither means
        ready for work: that is the verifier's pass)."""
        return self.state in UP_STATES

    @property
    def addresses(self) -> tuple[str, ...]:
        """Where to reach each worker from outside its network: the external address when that
        worker has one, else its internal one (as gcloud picks them); worker i stays index i."""
        external = self.external_ips + ("",) * (len(self.endpoints) - len(self.external_ips))
        return tuple(
            ext or internal for internal, ext in zip(self.endpoints, external, strict=True)
        )

    @property
    def internal_only(self) -> tuple[int, ...]:
        """The workers that have no external address."""
        return tuple(
            w
            for w in range(len(self.endpoints))
            if w >= len(self.external_ips) or not self.external_ips[w]
        )


@dataclass(frozen=True)
class QueuedInfo:
    name: str
    zone: str
    state: str  # "ACCEPTED", "ACTIVE", "SUSPENDED", ...
    node_id: str
    accelerator_type: str
    labels: dict[str, str] = field(default_factory=dict)
    flex: bool = False
    create_time: float | None = None
    spot: bool = False
    error: dict[str, Any] | None = (
        None  # a FAILED request's state.failedData.error: {code, message}
    )
    valid_until_s: float | None = None  # its queueingPolicy.validUntilDuration, in seconds
    initiator: str | None = None  # state.stateInitiator: who SUSPENDED it (USER or SERVICE)
    # Flex-start: runDuration.terminationTime, when Google ends its run (set once it is ACTIVE).
    ends_at: float | None = None


@dataclass(frozen=True)
class NodeRequest:
    """What to create. Labels always include managed-by=tpuwizard and the run id."""

    zone: str
    node_id: str
    # The checked plan's Slice (LaunchPlan.slice): its name is what Google is sent.
    slice: catalog.Slice
    run_id: str
    runtime_version: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    spot: bool = False
    # gcloud always sends networkConfig.enableExternalIps (true unless --internal-ips): without
    # it Google gives the workers internal addresses only (google-behaviour.md, Creating).
    external_ips: bool = True
    # For a queued resource: how long it may wait for capacity (queueingPolicy.
    # validUntilDuration), so a request left behind cannot become ACTIVE and bill hours later.
    queue_wait_s: float | None = None
    # The on-VM watchdog calls the TPU API with the VM's token, which needs this scope.
    cloud_platform_scope: bool = False
    # The node's service account (Node.serviceAccount.email); None: the project's default
    # compute account, which in organisations created since May 2024 has no roles.
    service_account: str | None = None
    # Autocheckpoint (TPU API, Preview): before a maintenance event Google sends the script
    # SIGTERM and waits up to 5 minutes. Only v2alpha1 knows the field (autocheckpointEnabled),
    # so such a node is created through v2alpha1 (queued.py's alpha_node_body).
    autocheckpoint: bool = False

    @property
    def service_account_body(self) -> dict[str, Any] | None:
        """``Node.serviceAccount`` as JSON, when an account or the API scope is wanted."""
        if not (self.cloud_platform_scope or self.service_account):
            return None
        body: dict[str, Any] = {"scope": [CLOUD_PLATFORM_SCOPE]}
        if self.service_account:
            body["email"] = self.service_account
        return body

    owner: str | None = None  # the owner label value; every resource tpuwizard makes has one
    # The launch's route (vm, spot, flex) and its deadline in seconds: Compute Engine puts both
    # in the instance's scheduling (provisioningModel, maxRunDuration with DELETE); the TPU API
    # reads ``spot`` and, for a queued request, is given the deadline by ``create_queued``.
    route: str = "vm"
    max_run_s: int | None = None
    # Compute Engine's Flex-start: "auto", or "resize-request" (the course's Route 2B: a template,
    # a MIG of size 0 and a resize request for the VM; core/cloud/backends.py's VIAS).
    via: str = "auto"

    @property
    def accelerator_type(self) -> str:
        """The accelerator type's name, as Google is sent it (``acceleratorType``)."""
        return self.slice.name

    @property
    def runtime(self) -> str:
        return self.runtime_version or self.slice.generation.runtime_version

    @property
    def labels(self) -> dict[str, str]:
        owner = {OWNER_LABEL: self.owner} if self.owner else {}
        return {**MANAGED_BY, RUN_LABEL: self.run_id, **owner}


def queued_info(data: dict[str, Any], zone: str) -> QueuedInfo:
    """A QueuedInfo from the v2/v2alpha1 REST JSON of a queued resource."""
    spec = (data.get("tpu", {}).get("nodeSpec") or [{}])[0]
    node = spec.get("node", {})
    created = data.get("createTime")
    ends = data.get("runDuration", {}).get("terminationTime")
    return QueuedInfo(
        name=data["name"].rsplit("/", 1)[-1],
        zone=zone,
        state=data.get("state", {}).get("state", "STATE_UNSPECIFIED"),
        node_id=spec.get("nodeId", ""),
        accelerator_type=node.get("acceleratorType", ""),
        labels=node.get("labels", {}),
        flex=data.get("provisioningModel") == "FLEX_START",
        create_time=_parse_time(created) if created else None,
        spot="spot" in data,
        error=data.get("state", {}).get("failedData", {}).get("error"),
        valid_until_s=_seconds(data.get("queueingPolicy", {}).get("validUntilDuration")),
        initiator=data.get("state", {}).get("stateInitiator"),
        ends_at=_parse_time(ends)
        if (ends := data.get("runDuration", {}).get("terminationTime"))
        else None,
    )


def _seconds(duration: object) -> float | None:
    """A protobuf Duration in JSON ("600s", "1.5s") in seconds; None when absent or unreadable."""
    text = str(duration or "")
    try:
        return float(text[:-1]) if text.endswith("s") else None
    except ValueError:
        return None


def _parse_time(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
