"""The sandbox's model of a TPU project: nodes, queued resources and long-running operations.

Everything is kept in one JSON file under the sandbox's home, so a crashed and restarted tpuwizard
(or sandbox) sees the same nodes. Time moves lazily: each request first "ticks" the model, which
finishes operations and advances states whose deadline has passed, so no background thread is
needed and a restart resumes where the clock says.

``SandboxState`` is composed of parts, each given what it uses: the state file
(:class:`~tpuwizard.sandbox.store.StateStore`), the operations, the VMs, the nodes, the queued
resources, and Compute Engine's instances with their zonal operations. The server answers each
route from one of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tpuwizard.sandbox.compute.instances import Instances
from tpuwizard.sandbox.compute.mig_parts import SliceParts
from tpuwizard.sandbox.compute.mig_resize import ResizeRequests
from tpuwizard.sandbox.compute.migs import ManagedInstanceGroups
from tpuwizard.sandbox.compute.zone_operations import ZoneOperations
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.store import StateStore
from tpuwizard.sandbox.tpu.nodes import Nodes
from tpuwizard.sandbox.tpu.operations import Operations
from tpuwizard.sandbox.tpu.queued import QueuedResources
from tpuwizard.sandbox.vms import VirtualMachines


class SandboxState:
    """A sandbox home's project: its parts, and the clock that moves them on.

    ``home``, ``file``, ``lock`` and ``data`` are the state file's, for callers that look at
    what the practice cloud holds (the session asks whether it holds anything)."""

    def __init__(
        self,
        home: Path,
        faults: Faults,
        delay: float = 1.0,
        authorized_keys: Path | None = None,
        ssh_port: int = 22,
    ) -> None:
        self.store = StateStore(home)
        self.home, self.file, self.lock = self.store.home, self.store.file, self.store.lock
        self.faults = faults
        self.delay = faults.slow_create if faults.slow_create is not None else delay
        self.ssh_port = ssh_port
        self.operations = Operations(self.store)
        self.vms = VirtualMachines(self.store, faults, authorized_keys)
        self.nodes = Nodes(self.store, self.operations, self.vms, faults, self.delay)
        self.queued = QueuedResources(
            self.store, self.operations, self.nodes, self.vms, faults, self.delay
        )
        # Compute Engine's TPU VMs, with their own (Compute-shaped) operations.
        self.zone_operations = ZoneOperations(self.store)
        self.instances = Instances(self.store, self.zone_operations, self.vms, faults, self.delay)
        # Multi-host slices on Compute Engine: workload policies and templates (regional), and
        # the MIGs whose VMs are instances above.
        self.slice_parts = SliceParts(self.store, self.zone_operations)
        self.migs = ManagedInstanceGroups(
            self.store, self.zone_operations, self.instances, self.slice_parts, self.vms, faults
        )
        self.resize_requests = ResizeRequests(self.migs)  # the MIGs' resize requests
        # Which part finishes an operation, by the kind it was started with.
        self._finishers: dict[str, Callable[[dict[str, Any]], None]] = {
            "create_node": self.nodes.finish_create,
            "delete_node": self.nodes.finish_delete,
            "update_node": self.nodes.finish_update,
            "create_queued": self.queued.finish_create,
            "delete_queued": self.queued.finish_delete,
        }

    @property
    def data(self) -> dict[str, Any]:
        """The state file's document as last read (a reload replaces the dict)."""
        return self.store.data

    def holds_resources(self) -> bool:
        """Does the practice cloud hold anything tpuwizard made: a node, a queued resource, a
        Compute Engine instance, MIG, template or policy? (Call with the state's lock held.)"""
        data = self.store.data
        kinds = ("instances", "migs", "instance_templates", "resource_policies")
        return bool(data["nodes"] or data["queued"] or any(data.get(k) for k in kinds))

    def worker_home(self, node_name: str, worker: int) -> Path:
        return self.vms.worker_home(node_name, worker)

    def tick(self) -> None:
        """Advance every state whose time has come."""
        t = time.time()
        changed = False
        for op in self.operations.due(t):
            self.operations.mark_done(op)
            finish = self._finishers.get(op["_on_done"]["kind"])
            if finish is not None:
                finish(op)
            changed = True
        changed |= self.queued.advance_all(t)
        changed |= self.vms.preempt_spot(t)
        changed |= self.vms.stall_worker()
        self.vms.maintenance_sigterm(t)  # marks beside the VMs' homes, not in the state
        self.vms.hold_chips()  # the same
        changed |= self.instances.advance_all(t)
        changed |= self.migs.advance_all(t)  # after the instances: it reads what they lost
        changed |= self.resize_requests.advance_all()  # after the MIGs: their VMs as they are
        for node in self.store.data["nodes"].values():
            boots_at = node.get("_reachable_at")
            if boots_at is not None and boots_at <= t and node["state"] == "CREATING":
                self.vms.boot_workers(node)  # google-behaviour.md:49: reachable before READY
                changed = True
        if changed:
            self.vms.sync_keys()
            self.store.save()
