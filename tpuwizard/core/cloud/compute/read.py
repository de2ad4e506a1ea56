"""Reading Compute Engine's answers into plain data: an ``Instance`` as a NodeInfo, the label
filter of a list (and the check that its answer honoured it), Compute's timestamps."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tpuwizard.core.cloud.compute.body import accelerator_of
from tpuwizard.core.cloud.types import NodeInfo


def label_filter(labels: dict[str, str] | None) -> str:
    # Compute's list filter: space-separated parenthesized expressions are ANDed.
    return " ".join(f'(labels.{k} = "{v}")' for k, v in sorted((labels or {}).items()))


def matching(nodes: list[NodeInfo], labels: dict[str, str] | None) -> list[NodeInfo]:
    want = labels or {}
    return [n for n in nodes if all(n.labels.get(k) == v for k, v in want.items())]


def parse_time(text: str) -> float:
    """An RFC 3339 time as Compute writes it ("2026-12-01T10:00:00.000-08:00")."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def node_info(instance: Any, zone: str) -> NodeInfo:
    """A NodeInfo from a compute_v1 ``Instance``: one worker, at the first interface."""
    interfaces = list(instance.network_interfaces)[:1]
    natted = [list(i.access_configs)[:1] for i in interfaces]
    machine = instance.machine_type.rsplit("/", 1)[-1]
    created = instance.creation_timestamp
    return NodeInfo(
        name=instance.name,
        zone=instance.zone.rsplit("/", 1)[-1] if instance.zone else zone,
        accelerator_type=accelerator_of(machine) or machine,
        state=instance.status or "STATUS_UNSPECIFIED",
        labels=dict(instance.labels),
        create_time=parse_time(created) if created else None,
        endpoints=tuple(i.network_i_p for i in interfaces),
        spot=instance.scheduling.provisioning_model == "SPOT",
        external_ips=tuple(c[0].nat_i_p if c else "" for c in natted),
        uid=str(instance.id or ""),
    )


def operation_status(op: Any) -> str:
    """An operation's status as a word (DONE, RUNNING...), whatever form the client gives."""
    return str(getattr(op.status, "name", op.status))


def operation_name(operation: Any) -> str | None:
    """The name of the operation a call answered with (None: the call gave none)."""
    if operation is None or isinstance(operation, str):
        return operation or None
    return str(operation.name) or None
