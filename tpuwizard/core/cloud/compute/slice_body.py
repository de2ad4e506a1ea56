"""The bodies of a multi-host slice on Compute Engine, as JSON (compute.v1.json's
``ResourcePolicy``, ``InstanceTemplate``, ``InstanceGroupManager``): a regional workload policy
naming the topology, a regional template carrying one VM's instance body, a zonal MIG in BULK
mode bound to the policy. Plain data in and out, no Google import.

Facts and field names: compute-engine.md ("Multi-host slices"). A policy and a MIG carry no
labels in compute.v1.json, so each part's ``description`` holds who made it (``SliceNote``); the
template's VMs carry the labels themselves, plus :data:`SLICE_LABEL` naming the slice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from tpuwizard.core.cloud.backends import VIA_RESIZE_REQUEST
from tpuwizard.core.cloud.compute.body import instance_body
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan import catalog

# The label every part's VMs share, naming the slice: status groups them by it.
SLICE_LABEL = "tpuwizard-id"
POLICY_SUFFIX, TEMPLATE_SUFFIX, REQUEST_SUFFIX = "-wp", "-it", "-rr"
POLICY, TEMPLATE, MIG, VM = "workload-policy", "instance-template", "mig", "node"
REQUEST = "resize-request"  # the course's Route 2B: a MIG's resize request (zonal, in its MIG)
# Generations whose topology Google writes in three dimensions (2x2x2), as libtpu does.
_THREE_D = {"v5p", "tpu7x"}
_NOTE_PREFIX = "tpuwizard "


def region_of(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def policy_name(slice_name: str) -> str:
    return slice_name + POLICY_SUFFIX


def template_name(slice_name: str) -> str:
    return slice_name + TEMPLATE_SUFFIX


def request_name(slice_name: str) -> str:
    return slice_name + REQUEST_SUFFIX


def by_resize_request(req: NodeRequest) -> bool:
    """The course's Route 2B: a template, a MIG of size 0 and a resize request for one VM."""
    return req.via == VIA_RESIZE_REQUEST


def is_single_vm(accelerator: str) -> bool:
    """A known single-host type: one VM, no MIG (an unknown one may be either: False). Asked
    of a name read back: a ledger record's, a node's as Google names it (edges)."""
    try:
        return catalog.parse_accelerator(accelerator).single_host
    except catalog.UnknownAcceleratorError:
        return False


def topology(s: catalog.Slice) -> str:
    """The workload policy's ``acceleratorTopology``: v6e-16 -> "4x4", v5p-16 -> "2x2x2"."""
    # program_fit (subprocess, tempfile, fit) only when a slice's body is made: the leftover
    # check reads this module's names and is_single_vm alone.
    from tpuwizard.core.plan.program_fit import topology_grid

    return "x".join(map(str, topology_grid(s.chips, s.generation.key in _THREE_D)))


@dataclass(frozen=True)
class SliceNote:
    """What a part's ``description`` says: the slice it belongs to, its zone and accelerator,
    and the labels its VMs carry (ownership for a part that has no labels of its own)."""

    slice_name: str
    zone: str
    accelerator: str
    labels: dict[str, str]

    def text(self) -> str:
        data = {"slice": self.slice_name, "zone": self.zone, "accelerator": self.accelerator}
        return _NOTE_PREFIX + json.dumps({**data, "labels": self.labels}, sort_keys=True)


def read_note(description: str) -> SliceNote | None:
    """The note a part of ours carries, or None (not ours, or not readable)."""
    if not description.startswith(_NOTE_PREFIX):
        return None
    try:
        data = json.loads(description[len(_NOTE_PREFIX) :])
        return SliceNote(
            str(data["slice"]),
            str(data["zone"]),
            str(data["accelerator"]),
            {str(k): str(v) for k, v in dict(data["labels"]).items()},
        )
    except (ValueError, KeyError, TypeError):
        return None


def slice_labels(req: NodeRequest) -> dict[str, str]:
    return {**req.labels, SLICE_LABEL: req.node_id}


def note_of(req: NodeRequest) -> SliceNote:
    return SliceNote(req.node_id, req.zone, req.accelerator_type, slice_labels(req))


def policy_body(req: NodeRequest) -> dict[str, Any]:
    """Never a placement policy: Google refuses one for tpu7x ("Use workload policy instead")."""
    return {
        "name": policy_name(req.node_id),
        "description": note_of(req).text(),
        "workloadPolicy": {
            "type": "HIGH_THROUGHPUT",
            "acceleratorTopology": topology(req.slice),
            "acceleratorTopologyMode": "AUTO_CONNECT",
        },
    }


def template_body(req: NodeRequest) -> dict[str, Any]:
    """One VM's instance body (the deadline, ``maxRunDuration`` + DELETE, included) as the
    template's properties; a template names its machine and disk types without a zone.

    Flex-start keeps ``provisioningModel: FLEX_START`` and its reservation affinity, but not
    ``params``: compute.v1.json's InstanceProperties has no such field (``requestValidForDuration``
    is "Relevant only for Instances.Insert API"), so a BULK MIG's wait for capacity has no bound
    of Google's and tpuwizard's --queue-wait is its own timer (compute/slices.py)."""
    s = req.slice
    one_vm = replace(req, slice=s.one_vm)
    properties = instance_body(one_vm)
    properties.pop("name")
    properties.pop("params", None)
    properties["machineType"] = properties["machineType"].rsplit("/", 1)[-1]
    for disk in properties["disks"]:
        params = disk["initializeParams"]
        params["diskType"] = params["diskType"].rsplit("/", 1)[-1]
    properties["labels"] = slice_labels(req)
    return {
        "name": template_name(req.node_id),
        "description": note_of(req).text(),
        "properties": properties,
    }


def mig_body(req: NodeRequest, project: str) -> dict[str, Any]:
    """Created empty (targetSize 0) and resized after: BULK makes all the VMs or none, and a
    VM that fails is left alone (DO_NOTHING), not repaired into a half slice. Route 2B's MIG
    (the course's ``managed create --size=0``) has no workload policy and no BULK mode: its
    resize request asks for the VM."""
    region = region_of(req.zone)
    base = f"projects/{project}/regions/{region}"
    mig: dict[str, Any] = {
        "name": req.node_id,
        "description": note_of(req).text(),
        "baseInstanceName": req.node_id,
        "instanceTemplate": f"{base}/instanceTemplates/{template_name(req.node_id)}",
        "targetSize": 0,
        "instanceLifecyclePolicy": {"defaultActionOnFailure": "DO_NOTHING"},
    }
    if by_resize_request(req):
        return mig
    return {
        **mig,
        "targetSizePolicy": {"mode": "BULK"},
        "resourcePolicies": {
            "workloadPolicy": f"{base}/resourcePolicies/{policy_name(req.node_id)}"
        },
    }


def request_body(req: NodeRequest) -> dict[str, Any]:
    """The course's ``resize-requests create --resize-by=1``, with ``requestedRunDuration``
    from the launch's deadline: "At the end of the run duration, the MIG deletes the created
    VMs" (about-resize-requests-mig, 10 minutes to 7 days; compute.v1.json's
    InstanceGroupManagerResizeRequest). Its description says whose it is, as every part's."""
    body: dict[str, Any] = {
        "name": request_name(req.node_id),
        "description": note_of(req).text(),
        "resizeBy": 1,
    }
    if req.max_run_s:
        body["requestedRunDuration"] = {"seconds": str(req.max_run_s)}
    return body
