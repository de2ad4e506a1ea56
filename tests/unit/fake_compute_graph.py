"""An in-memory stand-in for the Compute Engine clients a slice uses (resource policies, regional
instance templates, MIGs, instances, regional and zonal operations), answering with
google-cloud-compute's own message types, as the REST client would. Google's rules it keeps
(compute-engine.md, "Multi-host slices"): a MIG is made empty and BULK-resized (all VMs or
none: ``stockout`` makes the resize fail with no VM); its VMs carry the template's labels;
deleting the MIG deletes its VMs; every write answers an operation to poll.
"""

from __future__ import annotations

import itertools
from typing import Any

from google.api_core import exceptions as gx
from google.cloud import compute_v1

_ids = itertools.count(1)


class FakeGraph:
    def __init__(
        self,
        topology_state: str = "ACTIVE",
        stockout: bool = False,
        waiting: bool = False,
        refuse_requests: bool = False,
    ) -> None:
        self.topology_state, self.stockout = topology_state, stockout
        # Route 2B's resize requests refused with the words users report for TPU MIGs.
        self.refuse_requests = refuse_requests
        self.requests: dict[str, dict[str, Any]] = {}  # MIG name -> its requests by name
        # A BULK MIG with no capacity, as Google's resize answers it: DONE at once, no VM made,
        # each managed instance's last attempt ZONE_RESOURCE_POOL_EXHAUSTED.
        self.waiting = waiting
        self.policies: dict[str, Any] = {}
        self.templates: dict[str, Any] = {}
        self.migs: dict[str, Any] = {}
        self.instances: dict[str, Any] = {}
        self.operations: dict[str, Any] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def client(self, kind: Any) -> Any:
        return {
            compute_v1.ResourcePoliciesClient: _Policies,
            compute_v1.RegionInstanceTemplatesClient: _Templates,
            compute_v1.InstanceGroupManagersClient: _Migs,
            compute_v1.InstancesClient: _Instances,
            compute_v1.RegionOperationsClient: _Operations,
            compute_v1.ZoneOperationsClient: _Operations,
            compute_v1.InstanceGroupManagerResizeRequestsClient: _Requests,
        }[kind](self)

    def op(self, errors: list[tuple[str, str]] | None = None) -> Any:
        name = f"operation-{next(_ids)}"
        body: dict[str, Any] = {"name": name, "status": "DONE"}
        if errors:
            body["error"] = {"errors": [{"code": c, "message": m} for c, m in errors]}
        self.operations[name] = op = compute_v1.Operation(body)
        return op

    def log(self, method: str, **kw: Any) -> None:
        assert "timeout" in kw, f"{method} without a timeout"
        self.calls.append((method, kw))

    def names(self) -> list[str]:
        return [m for m, _ in self.calls]


class _Part:
    def __init__(self, graph: FakeGraph) -> None:
        self.g = graph


def _get(table: dict[str, Any], name: str) -> Any:
    if name not in table:
        raise gx.NotFound(f"The resource '{name}' was not found")
    return table[name]


class _Policies(_Part):
    def insert_unary(self, resource_policy_resource: Any, **kw: Any) -> Any:
        self.g.log("policies.insert", body=resource_policy_resource, **kw)
        self.g.policies[resource_policy_resource.name] = resource_policy_resource
        return self.g.op()

    def get(self, resource_policy: str, **kw: Any) -> Any:
        self.g.log("policies.get", **kw)
        return _get(self.g.policies, resource_policy)

    def list(self, **kw: Any) -> list[Any]:
        self.g.log("policies.list", **kw)
        return list(self.g.policies.values())

    def delete_unary(self, resource_policy: str, **kw: Any) -> Any:
        self.g.log("policies.delete", **kw)
        _get(self.g.policies, resource_policy)
        del self.g.policies[resource_policy]
        return self.g.op()


class _Templates(_Part):
    def insert_unary(self, instance_template_resource: Any, **kw: Any) -> Any:
        self.g.log("templates.insert", body=instance_template_resource, **kw)
        self.g.templates[instance_template_resource.name] = instance_template_resource
        return self.g.op()

    def get(self, instance_template: str, **kw: Any) -> Any:
        self.g.log("templates.get", **kw)
        return _get(self.g.templates, instance_template)

    def list(self, **kw: Any) -> list[Any]:
        self.g.log("templates.list", **kw)
        return list(self.g.templates.values())

    def delete_unary(self, instance_template: str, **kw: Any) -> Any:
        self.g.log("templates.delete", **kw)
        _get(self.g.templates, instance_template)
        if any(m.instance_template.endswith(instance_template) for m in self.g.migs.values()):
            raise gx.BadRequest(f"The instance_template resource '{instance_template}' is in use")
        del self.g.templates[instance_template]
        return self.g.op()


class _Migs(_Part):
    def insert_unary(self, instance_group_manager_resource: Any, **kw: Any) -> Any:
        mig = instance_group_manager_resource
        self.g.log("migs.insert", body=mig, **kw)
        self.g.migs[mig.name] = mig
        return self.g.op()

    def resize_unary(self, instance_group_manager: str, size: int, zone: str, **kw: Any) -> Any:
        self.g.log("migs.resize", size=size, **kw)
        mig = _get(self.g.migs, instance_group_manager)
        if self.g.stockout:  # BULK: all or none
            return self.g.op([("ZONE_RESOURCE_POOL_EXHAUSTED", "no capacity in " + zone)])
        mig.target_size = size
        if self.g.waiting:
            return self.g.op()
        template = self.g.templates[mig.instance_template.rsplit("/", 1)[-1]]
        for i in range(size):
            name = f"{mig.base_instance_name}-{'dcba'[i % 4]}{i}"  # not in worker order
            self.g.instances[name] = compute_v1.Instance(
                name=name,
                zone=zone,
                status="RUNNING",
                labels=dict(template.properties.labels),
                network_interfaces=[{"network_i_p": f"10.0.0.{10 + i}"}],
                machine_type=f"zones/{zone}/machineTypes/{template.properties.machine_type}",
            )
        mig.target_size = size
        mig.status = compute_v1.InstanceGroupManagerStatus(
            applied_accelerator_topologies=[{"accelerator_topology": "4x4", "state": ""}]
        )
        mig.status.applied_accelerator_topologies[0].state = self.g.topology_state
        return self.g.op()

    def get(self, instance_group_manager: str, **kw: Any) -> Any:
        self.g.log("migs.get", **kw)
        return _get(self.g.migs, instance_group_manager)

    def list(self, **kw: Any) -> list[Any]:
        self.g.log("migs.list", **kw)
        return list(self.g.migs.values())

    def list_managed_instances(self, instance_group_manager: str, **kw: Any) -> list[Any]:
        self.g.log("migs.list_managed_instances", **kw)
        mig = _get(self.g.migs, instance_group_manager)
        if self.g.waiting:
            tried = {"errors": {"errors": [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED"}]}}
            return [
                compute_v1.ManagedInstance(name=f"{mig.name}-{i}", last_attempt=tried)
                for i in range(mig.target_size)
            ]
        return [
            compute_v1.ManagedInstance(name=n, instance_status=v.status)
            for n, v in self.g.instances.items()
            if n.startswith(mig.base_instance_name + "-")
        ]

    def delete_unary(self, instance_group_manager: str, **kw: Any) -> Any:
        self.g.log("migs.delete", **kw)
        mig = _get(self.g.migs, instance_group_manager)
        self.g.requests.pop(instance_group_manager, None)
        for name in [n for n in self.g.instances if n.startswith(mig.base_instance_name + "-")]:
            del self.g.instances[name]
        del self.g.migs[instance_group_manager]
        return self.g.op()


class _Instances(_Part):
    def list(self, request: Any, **kw: Any) -> list[Any]:
        self.g.log("instances.list", filter=request.filter, **kw)
        return list(self.g.instances.values())

    def delete_unary(self, instance: str, **kw: Any) -> Any:
        """A slice's name is no instance's: ComputeCloud.delete_node then deletes its parts."""
        self.g.log("instances.delete", **kw)
        raise gx.NotFound(f"The resource '{instance}' was not found")


class _Operations(_Part):
    def get(self, operation: str, **kw: Any) -> Any:
        self.g.log("operations.get", **kw)
        return self.g.operations[operation]

    def wait(self, operation: str, **kw: Any) -> Any:
        self.g.log("operations.wait", **kw)
        return self.g.operations[operation]


class _Requests(_Part):
    """A MIG's resize requests (the course's Route 2B): ACCEPTED, then its VM made at once
    (SUCCEEDED), or left waiting with no capacity (``waiting``); cancel takes an active one only,
    delete an inactive one only (compute.v1.json's methods)."""

    def insert_unary(self, instance_group_manager: str, zone: str, **kw: Any) -> Any:
        request = kw.pop("instance_group_manager_resize_request_resource")
        self.g.log("requests.insert", body=request, **kw)
        mig = _get(self.g.migs, instance_group_manager)
        if self.g.refuse_requests:
            raise gx.BadRequest(
                "Creating resize requests for managed instance group with TPU is not allowed"
            )
        request.state = "ACCEPTED"
        if self.g.waiting:
            tried = {"error": {"errors": [{"code": "ZONE_RESOURCE_POOL_EXHAUSTED"}]}}
            request.status = compute_v1.InstanceGroupManagerResizeRequestStatus(last_attempt=tried)
        else:
            template = self.g.templates[mig.instance_template.rsplit("/", 1)[-1]]
            name = f"{mig.base_instance_name}-a0"
            self.g.instances[name] = compute_v1.Instance(
                name=name,
                zone=zone,
                status="RUNNING",
                labels=dict(template.properties.labels),
                network_interfaces=[{"network_i_p": "10.0.0.10"}],
            )
            mig.target_size += request.resize_by
            request.state = "SUCCEEDED"
        self.g.requests.setdefault(instance_group_manager, {})[request.name] = request
        return self.g.op()

    def list(self, instance_group_manager: str, **kw: Any) -> list[Any]:
        self.g.log("requests.list", **kw)
        _get(self.g.migs, instance_group_manager)
        return list(self.g.requests.get(instance_group_manager, {}).values())

    def cancel_unary(self, instance_group_manager: str, resize_request: str, **kw: Any) -> Any:
        self.g.log("requests.cancel", **kw)
        found = _get(self.g.requests.get(instance_group_manager, {}), resize_request)
        if found.state not in ("CREATING", "ACCEPTED"):
            raise gx.BadRequest(f"The resize request '{resize_request}' is not active")
        found.state = "CANCELLED"
        return self.g.op()

    def delete_unary(self, instance_group_manager: str, resize_request: str, **kw: Any) -> Any:
        self.g.log("requests.delete", **kw)
        table = self.g.requests.get(instance_group_manager, {})
        found = _get(table, resize_request)
        if found.state in ("CREATING", "ACCEPTED"):
            raise gx.BadRequest(f"The resize request '{resize_request}' is still active")
        del table[resize_request]
        return self.g.op()


class FakeReads:
    """The graph read as compute_rest.ComputeReads reads a server: its own objects (the views
    share google-cloud-compute's attribute names), None for a part not there. Each read is
    logged as the client call it stands for, with the reader's own timeout."""

    def __init__(self, graph: FakeGraph) -> None:
        self.g = graph

    def _one(self, method: str, table: dict[str, Any], name: str) -> Any:
        self.g.log(method, timeout="reader")
        return table.get(name)

    def _all(self, method: str, table: dict[str, Any]) -> list[Any]:
        self.g.log(method, timeout="reader")
        return list(table.values())

    def instance(self, zone: str, name: str) -> Any:
        return self._one("instances.get", self.g.instances, name)

    def instances(self, zone: str, filter_: str = "") -> list[Any]:
        self.g.log("instances.list", filter=filter_, timeout="reader")
        return list(self.g.instances.values())

    def mig(self, zone: str, name: str) -> Any:
        return self._one("migs.get", self.g.migs, name)

    def migs(self, zone: str) -> list[Any]:
        return self._all("migs.list", self.g.migs)

    def template(self, region: str, name: str) -> Any:
        return self._one("templates.get", self.g.templates, name)

    def templates(self, region: str) -> list[Any]:
        return self._all("templates.list", self.g.templates)

    def policy(self, region: str, name: str) -> Any:
        return self._one("policies.get", self.g.policies, name)

    def policies(self, region: str) -> list[Any]:
        return self._all("policies.list", self.g.policies)

    def resize_requests(self, zone: str, mig: str) -> list[Any]:
        self.g.log("requests.list", timeout="reader")
        return list(self.g.requests.get(mig, {}).values()) if mig in self.g.migs else []
