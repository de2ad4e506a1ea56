"""The routes of a multi-host slice on Compute Engine: resource policies and instance templates
(regional), MIGs (zonal), regional operations; :mod:`tpuwizard.sandbox.compute_routes` answers
them beside the single-host ones, in the same envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpuwizard.sandbox import compute_google as ce
from tpuwizard.sandbox.compute_filter import matches, parse_filter
from tpuwizard.sandbox.mig_parts import region_url, require_region

if TYPE_CHECKING:
    from tpuwizard.sandbox.state import SandboxState

PREFIX = r"^/compute/v1/projects/(?P<project>[^/]+)"
REGION = PREFIX + r"/regions/(?P<region>[^/]+)"
MIG = PREFIX + r"/zones/(?P<zone>[^/]+)/instanceGroupManagers"
NAME = r"/(?P<name>[^/]+)"
# (method, path, handler): the handler is a MigRoutes method.
PATHS = [
    ("POST", REGION + r"/resourcePolicies", "insert_policy"),
    ("GET", REGION + r"/resourcePolicies", "list_policies"),
    ("GET", REGION + r"/resourcePolicies" + NAME, "get_policy"),
    ("DELETE", REGION + r"/resourcePolicies" + NAME, "delete_policy"),
    ("POST", REGION + r"/instanceTemplates", "insert_template"),
    ("GET", REGION + r"/instanceTemplates", "list_templates"),
    ("GET", REGION + r"/instanceTemplates" + NAME, "get_template"),
    ("DELETE", REGION + r"/instanceTemplates" + NAME, "delete_template"),
    ("GET", REGION + r"/operations" + NAME, "get_region_operation"),
    ("POST", REGION + r"/operations" + NAME + "/wait", "wait_region_operation"),
    ("POST", MIG, "insert_mig"),
    ("GET", MIG, "list_migs"),
    ("GET", MIG + NAME, "get_mig"),
    ("DELETE", MIG + NAME, "delete_mig"),
    ("POST", MIG + NAME + "/resize", "resize_mig"),
    ("POST", MIG + NAME + "/listManagedInstances", "list_managed_instances"),
    ("POST", MIG + NAME + "/resizeRequests", "insert_resize_request"),
    ("GET", PREFIX + r"/aggregated/instanceGroupManagers", "aggregated_migs"),
]


def listing(kind: str, link: str, items: list[Any], query: dict[str, str]) -> dict[str, Any]:
    wanted = parse_filter(query.get("filter", ""))
    return {
        "kind": kind,
        "id": link,
        "items": [i for i in items if matches(wanted, i)],
        "selfLink": link,
    }


class MigRoutes:
    """One method per route; each returns the JSON to answer with."""

    def __init__(self, state: SandboxState) -> None:
        self.s = state

    def insert_policy(self, project: str, region: str, query: dict, body: dict) -> dict:
        return self.s.slice_parts.insert_policy(project, region, body)

    def list_policies(self, project: str, region: str, query: dict, body: Any) -> dict:
        items = self.s.slice_parts.listing("resource_policies", project, region)
        link = f"{region_url(project, region)}/resourcePolicies"
        return listing("compute#resourcePolicyList", link, items, query)

    def get_policy(self, project: str, region: str, name: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox.model import public

        return public(self.s.slice_parts.policy(project, region, name))

    def delete_policy(self, project: str, region: str, name: str, query: dict, body: Any) -> dict:
        return self.s.slice_parts.delete_policy(project, region, name)

    def insert_template(self, project: str, region: str, query: dict, body: dict) -> dict:
        return self.s.slice_parts.insert_template(project, region, body)

    def list_templates(self, project: str, region: str, query: dict, body: Any) -> dict:
        items = self.s.slice_parts.listing("instance_templates", project, region)
        link = f"{region_url(project, region)}/instanceTemplates"
        return listing("compute#instanceTemplateList", link, items, query)

    def get_template(self, project: str, region: str, name: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox.model import public

        return public(self.s.slice_parts.template(project, region, name))

    def delete_template(self, project: str, region: str, name: str, query: dict, body: Any) -> dict:
        return self.s.slice_parts.delete_template(project, region, name)

    def get_region_operation(
        self, project: str, region: str, name: str, query: dict, body: Any
    ) -> dict:
        require_region(region)
        return self.s.zone_operations.get(project, region, name, scope="regions")

    def insert_mig(self, project: str, zone: str, query: dict, body: dict) -> dict:
        return self.s.migs.insert(project, zone, body)

    def list_migs(self, project: str, zone: str, query: dict, body: Any) -> dict:
        link = f"{ce.zone_url(project, zone)}/instanceGroupManagers"
        items = self.s.migs.in_zone(project, zone)
        return listing("compute#instanceGroupManagerList", link, items, query)

    def get_mig(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.migs.get(project, zone, name)

    def delete_mig(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.migs.delete(project, zone, name)

    def resize_mig(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.migs.resize(project, zone, name, query.get("size"))

    def list_managed_instances(
        self, project: str, zone: str, name: str, query: dict, body: Any
    ) -> dict:
        return self.s.migs.managed_instances(project, zone, name)

    def insert_resize_request(
        self, project: str, zone: str, name: str, query: dict, body: Any
    ) -> dict:
        return self.s.migs.refuse_resize_request(project, zone, name)

    def aggregated_migs(self, project: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox import instance_rules

        wanted = parse_filter(query.get("filter", ""))
        items: dict[str, Any] = {}
        for zone in instance_rules.zones():
            mine = [m for m in self.s.migs.in_zone(project, zone) if matches(wanted, m)]
            if mine:
                items[f"zones/{zone}"] = {"instanceGroupManagers": mine}
        link = f"{ce.BASE}projects/{project}/aggregated/instanceGroupManagers"
        return {
            "kind": "compute#instanceGroupManagerAggregatedList",
            "id": link,
            "items": items,
            "selfLink": link,
        }
