"""Compute Engine's JSON answers read into typed values with google-cloud-compute's own attribute
names (``network_interfaces[0].network_i_p``, ``scheduling.provisioning_model``...), so that
compute/read.py and compute/slice_reads.py read them exactly as they read that library's messages.

Only the fields tpuwizard reads are kept; a field Google left out reads as the library's default
does (``""``, ``0``, an empty list or map, an empty message). Each view names its schema in
compute.v1.json, and each field its key there (tests/unit/test_compute_views.py holds them to
the discovery document).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

View = TypeVar("View")


def _key(json: str | None = None) -> dict[str, Any]:
    return {"json": json} if json else {}


def _many(kind: type, json: str | None = None) -> Any:
    return field(default=(), metadata={**_key(json), "many": kind})


def json_key(name: str, metadata: Any) -> str:
    """A field's key in Google's JSON: its own where the library's name is not plain camelCase
    of it (``network_i_p`` is ``networkIP``)."""
    if metadata.get("json"):
        return str(metadata["json"])
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def read(kind: type[View], data: Any) -> View:
    """``data`` (a JSON object, or None for one Google left out) as a ``kind``."""
    data = data if isinstance(data, dict) else {}
    values: dict[str, Any] = {}
    for f in fields(kind):  # type: ignore[arg-type]
        raw = data.get(json_key(f.name, f.metadata))
        if "one" in f.metadata:
            values[f.name] = read(f.metadata["one"], raw)
        elif "many" in f.metadata:
            values[f.name] = tuple(read(f.metadata["many"], x) for x in raw or ())
        elif f.type == "int":
            values[f.name] = int(raw or 0)  # a uint64 comes as a string
        elif f.type == "dict[str, str]":
            values[f.name] = {str(k): str(v) for k, v in (raw or {}).items()}
        else:
            values[f.name] = str(raw or "")
    return kind(**values)


@dataclass(frozen=True)
class AccessConfig:
    SCHEMA: ClassVar[str] = "AccessConfig"
    nat_i_p: str = field(default="", metadata=_key("natIP"))


@dataclass(frozen=True)
class NetworkInterface:
    SCHEMA: ClassVar[str] = "NetworkInterface"
    network_i_p: str = field(default="", metadata=_key("networkIP"))
    access_configs: tuple[AccessConfig, ...] = _many(AccessConfig)


@dataclass(frozen=True)
class Scheduling:
    SCHEMA: ClassVar[str] = "Scheduling"
    provisioning_model: str = ""


@dataclass(frozen=True)
class ResourceStatusScheduling:
    SCHEMA: ClassVar[str] = "ResourceStatusScheduling"
    termination_timestamp: str = ""


@dataclass(frozen=True)
class ResourceStatus:
    SCHEMA: ClassVar[str] = "ResourceStatus"
    scheduling: ResourceStatusScheduling = field(
        default_factory=ResourceStatusScheduling, metadata={"one": ResourceStatusScheduling}
    )


@dataclass(frozen=True)
class Instance:
    SCHEMA: ClassVar[str] = "Instance"
    name: str = ""
    zone: str = ""
    machine_type: str = ""
    status: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    id: int = 0
    network_interfaces: tuple[NetworkInterface, ...] = _many(NetworkInterface)
    scheduling: Scheduling = field(default_factory=Scheduling, metadata={"one": Scheduling})
    resource_status: ResourceStatus = field(
        default_factory=ResourceStatus, metadata={"one": ResourceStatus}
    )


@dataclass(frozen=True)
class AcceleratorTopology:
    SCHEMA: ClassVar[str] = "InstanceGroupManagerStatusAcceleratorTopology"
    state: str = ""


@dataclass(frozen=True)
class GroupStatus:
    SCHEMA: ClassVar[str] = "InstanceGroupManagerStatus"
    applied_accelerator_topologies: tuple[AcceleratorTopology, ...] = _many(AcceleratorTopology)


@dataclass(frozen=True)
class GroupPolicies:
    SCHEMA: ClassVar[str] = "InstanceGroupManagerResourcePolicies"
    workload_policy: str = ""  # none: the course's Route 2B (a MIG with no topology to wait on)


@dataclass(frozen=True)
class InstanceGroupManager:
    SCHEMA: ClassVar[str] = "InstanceGroupManager"
    name: str = ""
    id: int = 0
    description: str = ""
    creation_timestamp: str = ""
    status: GroupStatus = field(default_factory=GroupStatus, metadata={"one": GroupStatus})
    resource_policies: GroupPolicies = field(
        default_factory=GroupPolicies, metadata={"one": GroupPolicies}
    )


@dataclass(frozen=True)
class InstanceProperties:
    SCHEMA: ClassVar[str] = "InstanceProperties"
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InstanceTemplate:
    SCHEMA: ClassVar[str] = "InstanceTemplate"
    name: str = ""
    description: str = ""
    creation_timestamp: str = ""
    properties: InstanceProperties = field(
        default_factory=InstanceProperties, metadata={"one": InstanceProperties}
    )


@dataclass(frozen=True)
class ResourcePolicy:
    SCHEMA: ClassVar[str] = "ResourcePolicy"
    name: str = ""
    description: str = ""
    creation_timestamp: str = ""


@dataclass(frozen=True)
class ResizeRequest:
    """A MIG's resize request (the course's Route 2B): a slice's read counts them."""

    SCHEMA: ClassVar[str] = "InstanceGroupManagerResizeRequest"
    name: str = ""
    state: str = ""


@dataclass(frozen=True)
class Named:
    """A zone or a machine type: only its name is read."""

    SCHEMA: ClassVar[str] = "Zone"
    name: str = ""


VIEWS: tuple[type, ...] = (
    AccessConfig,
    NetworkInterface,
    Scheduling,
    ResourceStatusScheduling,
    ResourceStatus,
    Instance,
    AcceleratorTopology,
    GroupStatus,
    GroupPolicies,
    InstanceGroupManager,
    InstanceProperties,
    InstanceTemplate,
    ResourcePolicy,
    ResizeRequest,
    Named,
)
