"""The routes of a multi-host slice on Compute Engine: resource policies and instance templates
(regional, or global as the course's Route 2B makes its template), MIGs (zonal) with their resize
requests, regional and global operations, and what gcloud 528 reads around them (aggregated lists,
autoscalers); :mod:`tpuwizard.sandbox.compute.routes` answers them beside the single-host ones, in
the same envelope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute.list_filter import matches, parse_filter
from tpuwizard.sandbox.compute.mig_parts import region_url, require_region

if TYPE_CHECKING:
    from tpuwizard.sandbox.state import SandboxState

PREFIX = r"^/compute/v1/projects/(?P<project>[^/]+)"
REGION = PREFIX + r"/regions/(?P<region>[^/]+)"
MIG = PREFIX + r"/zones/(?P<zone>[^/]+)/instanceGroupManagers"
NAME = r"/(?P<name>[^/]+)"
GLOBAL = PREFIX + r"/global"
RESIZE = MIG + r"/(?P<mig>[^/]+)/resizeRequests"
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
    ("POST", RESIZE, "insert_resize_request"),
    ("GET", RESIZE, "list_resize_requests"),
    ("GET", RESIZE + NAME, "get_resize_request"),
    ("DELETE", RESIZE + NAME, "delete_resize_request"),
    ("POST", RESIZE + NAME + "/cancel", "cancel_resize_request"),
    ("GET", PREFIX + r"/aggregated/instanceGroupManagers", "aggregated_migs"),
    ("POST", GLOBAL + r"/instanceTemplates", "insert_global_template"),
    ("GET", GLOBAL + r"/instanceTemplates", "list_global_templates"),
    ("GET", GLOBAL + r"/instanceTemplates" + NAME, "get_global_template"),
    ("DELETE", GLOBAL + r"/instanceTemplates" + NAME, "delete_global_template"),
    ("GET", GLOBAL + r"/operations" + NAME, "get_global_operation"),
    ("POST", GLOBAL + r"/operations" + NAME + "/wait", "wait_global_operation"),
    ("GET", PREFIX + r"/aggregated/instanceTemplates", "aggregated_templates"),
    ("GET", PREFIX + r"/aggregated/resourcePolicies", "aggregated_policies"),
    # gcloud's `instance-groups managed delete` and `describe` read the zone's autoscalers first
    # (an autoscaled MIG is deleted with its autoscaler): the sandbox makes none, so none exist.
    ("GET", PREFIX + r"/zones/(?P<zone>[^/]+)/autoscalers", "list_autoscalers"),
    # ... and `instance-groups managed list` reads each zone's instance groups for their sizes.
    ("GET", PREFIX + r"/zones/(?P<zone>[^/]+)/instanceGroups", "list_instance_groups"),
    ("GET", PREFIX + r"/zones/(?P<zone>[^/]+)/instanceGroups" + NAME, "get_instance_group"),
    ("GET", PREFIX + r"/zones/(?P<zone>[^/]+)/autoscalers" + NAME, "get_autoscaler"),
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

    def insert_resize_request(self, project: str, zone: str, mig: str, query: dict, body: Any):
        return self.s.resize_requests.insert(project, zone, mig, body)

    def list_resize_requests(self, project: str, zone: str, mig: str, query: dict, body: Any):
        link = f"{ce.zone_url(project, zone)}/instanceGroupManagers/{mig}/resizeRequests"
        items = self.s.resize_requests.listing(project, zone, mig)
        return listing("compute#instanceGroupManagerResizeRequestList", link, items, query)

    def get_resize_request(self, project: str, zone: str, mig: str, name: str, **_: Any) -> dict:
        return self.s.resize_requests.get(project, zone, mig, name)

    def delete_resize_request(self, project: str, zone: str, mig: str, name: str, **_: Any):
        return self.s.resize_requests.delete(project, zone, mig, name)

    def cancel_resize_request(self, project: str, zone: str, mig: str, name: str, **_: Any):
        return self.s.resize_requests.cancel(project, zone, mig, name)

    # --- global instance templates, aggregated lists, autoscalers ---------------------------

    def insert_global_template(self, project: str, query: dict, body: dict) -> dict:
        return self.s.slice_parts.insert_template(project, None, body)

    def list_global_templates(self, project: str, query: dict, body: Any) -> dict:
        items = self.s.slice_parts.listing("instance_templates", project, None)
        link = f"{ce.BASE}projects/{project}/global/instanceTemplates"
        return listing("compute#instanceTemplateList", link, items, query)

    def get_global_template(self, project: str, name: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox.model import public

        return public(self.s.slice_parts.template(project, None, name))

    def delete_global_template(self, project: str, name: str, query: dict, body: Any) -> dict:
        return self.s.slice_parts.delete_template(project, None, name)

    def get_global_operation(self, project: str, name: str, query: dict, body: Any) -> dict:
        return self.s.zone_operations.get(project, "", name, scope="global")

    def aggregated_templates(self, project: str, query: dict, body: Any) -> dict:
        return self._aggregated(project, "instance_templates", "instanceTemplates", query)

    def aggregated_policies(self, project: str, query: dict, body: Any) -> dict:
        return self._aggregated(project, "resource_policies", "resourcePolicies", query)

    def _aggregated(self, project: str, table: str, key: str, query: dict) -> dict:
        wanted = parse_filter(query.get("filter", ""))
        items: dict[str, Any] = {}
        for scope, found in self.s.slice_parts.scopes(table, project).items():
            mine = [r for r in found if matches(wanted, r)]
            if mine:
                items[scope] = {key: mine}
        link = f"{ce.BASE}projects/{project}/aggregated/{key}"
        kind = "compute#instanceTemplateAggregatedList"
        if key == "resourcePolicies":
            kind = "compute#resourcePolicyAggregatedList"
        return {"kind": kind, "id": link, "items": items, "selfLink": link}

    def list_autoscalers(self, project: str, zone: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox.compute import instance_rules

        instance_rules.require_zone(zone)
        link = f"{ce.zone_url(project, zone)}/autoscalers"
        return listing("compute#autoscalerList", link, [], query)

    def get_autoscaler(self, project: str, zone: str, name: str, query: dict, body: Any):
        from tpuwizard.sandbox.model import ApiError

        key = f"projects/{project}/zones/{zone}/autoscalers/{name}"
        raise ApiError(404, "notFound", f"The resource '{key}' was not found")

    def aggregated_migs(self, project: str, query: dict, body: Any) -> dict:
        from tpuwizard.sandbox import google
        from tpuwizard.sandbox.compute import instance_rules

        wanted = parse_filter(query.get("filter", ""))
        items: dict[str, Any] = {}
        for zone in google.listed(instance_rules.zones(), self.s.faults.ai_zones_visible):
            mine = [m for m in self.s.migs.in_zone(project, zone) if matches(wanted, m)]
            if zone in self.s.faults.unreachable:
                items[f"zones/{zone}"] = {"warning": ce.unreachable_warning(f"zones/{zone}")}
            elif mine:
                items[f"zones/{zone}"] = {"instanceGroupManagers": mine}
        link = f"{ce.BASE}projects/{project}/aggregated/instanceGroupManagers"
        return {
            "kind": "compute#instanceGroupManagerAggregatedList",
            "id": link,
            "items": items,
            "selfLink": link,
        }

    def list_instance_groups(self, project: str, zone: str, query: dict, body: Any) -> dict:
        link = f"{ce.zone_url(project, zone)}/instanceGroups"
        groups = [self.s.migs.instance_group(m) for m in self.s.migs.in_zone(project, zone)]
        return listing("compute#instanceGroupList", link, groups, query)

    def get_instance_group(self, project: str, zone: str, name: str, query: dict, body: Any):
        return self.s.migs.instance_group(self.s.migs.get(project, zone, name))
