"""Compute Engine's REST paths in the sandbox, beside the TPU API's (same port, same token).

The server hands every path under ``/compute/v1/`` here (and the sandbox's own question of where an
instance's worker lives, ``/sandbox/v1/projects/P/zones/Z/instances/NAME:workers``, or a MIG's
workers, ``.../instanceGroupManagers/NAME:workers``, in worker order). The routes of multi-host
slices (policies, templates, MIGs, regional operations) are
:mod:`~tpuwizard.sandbox.compute.mig_routes`'s. Errors answer in Compute Engine's shape,
``{"error": {"code", "message", "errors": [{"message", "domain", "reason"}]}}``; an unknown path
is a 404 and a known path with another method a 405, in JSON.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tpuwizard.sandbox import google, quota_limits
from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute import images as compute_images
from tpuwizard.sandbox.compute import instance_rules, mig_routes
from tpuwizard.sandbox.compute.list_filter import matches, parse_filter
from tpuwizard.sandbox.faults import ConnectionDropped
from tpuwizard.sandbox.model import ApiError

if TYPE_CHECKING:
    from tpuwizard.sandbox.state import SandboxState

PREFIX = r"^/compute/v1/projects/(?P<project>[^/]+)"
ZONE = PREFIX + r"/zones/(?P<zone>[^/]+)"
# tpuwizard's create call of each kind: an instance's insert, a slice's first part (its policy), and
# the course's Route 2B's first (its template; a slice's template comes after its policy).
CREATE_CALLS = ("insert_instance", "mig.insert_policy", "mig.insert_template")
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p + "$"), h)
    for m, p, h in [
        ("GET", PREFIX, "get_project"),  # tpu-vm ssh reads it (gcloud_methods.py)
        ("GET", PREFIX + r"/zones", "list_zones"),
        ("GET", ZONE, "get_zone"),
        ("GET", ZONE + r"/machineTypes", "list_machine_types"),
        ("GET", ZONE + r"/machineTypes/(?P<name>[^/]+)", "get_machine_type"),
        ("GET", ZONE + r"/instances", "list_instances"),
        ("POST", ZONE + r"/instances", "insert_instance"),
        ("GET", ZONE + r"/instances/(?P<name>[^/]+)", "get_instance"),
        ("DELETE", ZONE + r"/instances/(?P<name>[^/]+)", "delete_instance"),
        ("POST", ZONE + r"/instances/(?P<name>[^/]+)/setScheduling", "set_scheduling"),
        ("GET", PREFIX + r"/aggregated/instances", "aggregated_instances"),
        ("GET", PREFIX + r"/aggregated/machineTypes", "aggregated_machine_types"),
        ("GET", PREFIX + r"/regions/(?P<region>[^/]+)", "get_region"),
        ("GET", PREFIX + r"/regions/(?P<region>[^/]+)/routers", "list_routers"),
        ("GET", PREFIX + r"/global/firewalls", "list_firewalls"),
        ("GET", ZONE + r"/operations", "list_operations"),
        ("GET", PREFIX + r"/aggregated/operations", "aggregated_operations"),
        ("GET", ZONE + r"/operations/(?P<name>[^/]+)", "get_operation"),
        ("GET", PREFIX + r"/global/images/family/(?P<family>[^/]+)", "get_image_from_family"),
        ("GET", PREFIX + r"/global/images/(?P<name>[^/]+)", "get_image"),
        ("POST", ZONE + r"/operations/(?P<name>[^/]+)/wait", "wait_operation"),
        *[(m, p, f"mig.{h}") for m, p, h in mig_routes.PATHS],
    ]
]
PREFLIGHT_READS = ("get_region", "list_firewalls")  # read by the preflight alone
WORKERS_RE = re.compile(
    r"^/sandbox/v1/projects/(?P<project>[^/]+)/zones/(?P<zone>[^/]+)"
    r"/(?P<kind>instances|instanceGroupManagers)/(?P<name>[^/:]+):workers$"
)
# zoneOperations.wait: "waits for no more than the default deadline (2 minutes)" (compute.v1.json).
WAIT_S = 120.0
POLL_S = 0.05
# ApiError's ``status`` for errors made elsewhere in the sandbox (the bearer token's 401, a damaged
# state file) -> Compute Engine's ``reason``.
REASONS = {
    "UNAUTHENTICATED": "authError",
    "PERMISSION_DENIED": "forbidden",
    "UNAVAILABLE": "backendError",
    "INTERNAL": "backendError",
    "NOT_FOUND": "notFound",
    "INVALID_ARGUMENT": "invalid",
}


def serves(path: str) -> bool:
    return path.startswith("/compute/") or bool(WORKERS_RE.match(path))


def error_body(err: ApiError) -> dict[str, Any]:
    reason = REASONS.get(err.status, err.status)
    return {
        "error": {
            "code": err.http,
            "message": err.message,
            "errors": [{"message": err.message, "domain": "global", "reason": reason}],
        }
    }


def injected(state: SandboxState, method: str, project: str) -> ApiError | None:
    """The counted faults that answer any request, in Compute Engine's words."""
    faults = state.faults
    if faults.take("unavailable"):
        return ApiError(503, "backendError", "The service is currently unavailable.")
    if faults.take("unauthenticated"):
        return ApiError(401, "authError", "Request is missing required authentication credential.")
    if faults.take("api_disabled"):
        return ApiError(
            403,
            "accessNotConfigured",
            f"Compute Engine API has not been used in project {project} before or it is "
            "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
            f"compute.googleapis.com/overview?project={project} then retry.",
        )
    if faults.take("forbidden"):
        verb = "create" if method == "POST" else "list"
        return ApiError(
            403,
            "forbidden",
            f"Required 'compute.instances.{verb}' permission for 'projects/{project}'",
        )
    if method == "GET" and faults.take("read_error"):
        return ApiError(500, "backendError", "Internal error. Please try again.")
    return None


def answer(
    state: SandboxState,
    method: str,
    path: str,
    query: dict[str, str],
    raw: bytes,
    authenticate: Callable[[], None],
) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON) for one request under ``/compute/``; ``authenticate`` raises the
    server's 401 for a missing or wrong bearer token."""
    try:
        authenticate()
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            raise ApiError(
                400, "parseError", "This API does not support parsing form-encoded input."
            ) from None
        if (workers := WORKERS_RE.match(path)) and method == "GET":
            where = workers.groupdict()
            part = state.instances if where.pop("kind") == "instances" else state.migs
            with state.store.transaction():
                state.tick()
                return 200, {"homes": part.worker_homes(**where)}
        found = [(m, p.match(path), h) for m, p, h in ROUTES if p.match(path)]
        if not found:
            raise ApiError(404, "notFound", f"The requested URL {path} was not found.")
        route = next(((match, h) for m, match, h in found if m == method), None)
        if route is None:
            raise ApiError(
                405, "httpMethodNotAllowed", f"Method {method} is not allowed on {path}."
            )
        match, handler = route
        assert match is not None
        args = match.groupdict()
        # The preflight's own reads leave the counted faults to the launch (preflight-sandbox.md).
        fault = None if handler in PREFLIGHT_READS else injected(state, method, args["project"])
        if fault is not None:
            raise fault
        if handler in ("wait_operation", "mig.wait_region_operation", "mig.wait_global_operation"):
            return 200, wait_operation(state, **args)
        with state.store.transaction():
            state.tick()
            routes: Any = (
                mig_routes.MigRoutes(state) if handler.startswith("mig.") else Routes(state)
            )
            result = getattr(routes, handler.removeprefix("mig."))(query=query, body=body, **args)
        if handler in CREATE_CALLS and state.faults.take("reset_create"):
            raise ConnectionDropped(handler)  # carried out and saved; the answer never goes
        return 200, result
    except ApiError as err:
        return err.http, error_body(err)


def wait_operation(
    state: SandboxState, project: str, name: str, zone: str = "", region: str = ""
) -> dict[str, Any]:
    """The operation (of a zone, of a region, or global: neither given) once DONE, or as it is
    after the default deadline; the state file is not held while it waits."""
    deadline = time.monotonic() + WAIT_S
    where, scope = (zone, "zones") if zone else (region, "regions") if region else ("", "global")
    while True:
        with state.store.transaction():
            state.tick()
            op = state.zone_operations.get(project, where, name, scope)
        if op["status"] == "DONE" or time.monotonic() >= deadline:
            return op
        time.sleep(POLL_S)


def page(items: list[Any], query: dict[str, str]) -> tuple[list[Any], str | None]:
    size = int(query.get("maxResults") or 500)
    start = int(query.get("pageToken") or 0)
    more = str(start + size) if start + size < len(items) else None
    return items[start : start + size], more


class Routes:
    """One method per route; each returns the JSON to answer with."""

    def __init__(self, state: SandboxState) -> None:
        self.s = state

    def get_project(self, project: str, query: dict, body: dict) -> dict:
        from tpuwizard.sandbox.tpu.gcloud_methods import GcloudMethods

        return GcloudMethods(self.s).get_compute_project(project, query, body)

    def _listing(self, kind: str, link: str, items: list[Any], query: dict[str, str]) -> dict:
        shown, more = page(items, query)
        out: dict[str, Any] = {"kind": kind, "id": link, "items": shown, "selfLink": link}
        if more:
            out["nextPageToken"] = more
        return out

    def list_zones(self, project: str, query: dict, body: Any) -> dict:
        shown = google.listed(instance_rules.zones(), self.s.faults.ai_zones_visible)
        zones = [ce.zone_resource(project, z) for z in shown]
        wanted = parse_filter(query.get("filter", ""))
        zones = [z for z in zones if matches(wanted, z)]
        return self._listing("compute#zoneList", f"{ce.BASE}projects/{project}/zones", zones, query)

    def get_zone(self, project: str, zone: str, query: dict, body: Any) -> dict:
        if zone not in instance_rules.zones():
            raise ApiError(
                404, "notFound", f"The resource 'projects/{project}/zones/{zone}' was not found"
            )
        return ce.zone_resource(project, zone)

    def list_machine_types(self, project: str, zone: str, query: dict, body: Any) -> dict:
        instance_rules.require_zone(zone)
        types = [ce.machine_type_resource(project, zone, m) for m in ce.zone_table().get(zone, [])]
        wanted = parse_filter(query.get("filter", ""))
        types = [t for t in types if matches(wanted, t)]
        link = f"{ce.zone_url(project, zone)}/machineTypes"
        return self._listing("compute#machineTypeList", link, types, query)

    def get_machine_type(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        instance_rules.require_zone(zone)
        found = ce.machine_type(zone, name)
        if found is None:
            raise ApiError(
                404,
                "notFound",
                f"The resource 'projects/{project}/zones/{zone}/machineTypes/{name}' was not found",
            )
        return ce.machine_type_resource(project, zone, found)

    def aggregated_machine_types(self, project: str, query: dict, body: Any) -> dict:
        """Every zone's machine types in one list, as Google answers the survey of where TPU
        machine types are (one call, where zones.list and a list per zone would be more). The
        zones are those zones.list shows: the AI zones only once they are visible."""
        wanted = parse_filter(query.get("filter", ""))
        zones = google.listed(instance_rules.zones(), self.s.faults.ai_zones_visible)
        table = ce.zone_table()
        every = [
            (zone, t)
            for zone in zones
            for m in table.get(zone, [])
            if matches(wanted, t := ce.machine_type_resource(project, zone, m))
        ]
        return self._aggregated("machineTypes", project, every, query, zones)

    def list_instances(self, project: str, zone: str, query: dict, body: Any) -> dict:
        wanted = parse_filter(query.get("filter", ""))
        items = [i for i in self.s.instances.in_zone(project, zone) if matches(wanted, i)]
        link = f"{ce.zone_url(project, zone)}/instances"
        return self._listing("compute#instanceList", link, items, query)

    def aggregated_instances(self, project: str, query: dict, body: Any) -> dict:
        wanted = parse_filter(query.get("filter", ""))
        # The AI zones hidden, as zones.list hides them (Google hides them from the REST API).
        zones = google.listed(instance_rules.zones(), self.s.faults.ai_zones_visible)
        every = [
            (zone, i)
            for zone in zones
            for i in self.s.instances.in_zone(project, zone)
            if matches(wanted, i)
        ]
        return self._aggregated("instances", project, every, query, zones)

    def _aggregated(
        self,
        kind: str,
        project: str,
        every: list[tuple[str, Any]],
        query: dict,
        zones: list[str],
    ) -> dict:
        """An aggregated list's page: each zone's ``kind`` under "zones/ZONE", a warning for
        each zone with none (on the first page)."""
        shown, more = page(every, query)
        items: dict[str, Any] = {}
        for zone in zones:
            mine = [i for z, i in shown if z == zone]
            if zone in self.s.faults.unreachable:
                items[f"zones/{zone}"] = {"warning": ce.unreachable_warning(f"zones/{zone}")}
            elif mine:
                items[f"zones/{zone}"] = {kind: mine}
            elif not query.get("pageToken"):
                items[f"zones/{zone}"] = {
                    "warning": {
                        "code": "NO_RESULTS_ON_PAGE",
                        "message": f"There are no results for scope 'zones/{zone}' on this page.",
                        "data": [{"key": "scope", "value": f"zones/{zone}"}],
                    }
                }
        singular = {"instances": "instance", "machineTypes": "machineType"}[kind]
        link = f"{ce.BASE}projects/{project}/aggregated/{kind}"
        out: dict[str, Any] = {
            "kind": f"compute#{singular}AggregatedList",
            "id": link,
            "items": items,
            "selfLink": link,
        }
        if more:
            out["nextPageToken"] = more
        return out

    def list_routers(self, project: str, region: str, query: dict, body: Any) -> dict:
        """Cloud Routers, with a NAT where the fault cloud_nat puts one (none by default, as
        google-behaviour.md:14 says: "no Cloud NAT by default")."""
        items = ce.nat_routers(project, region, self.s.faults.cloud_nat)
        link = f"{ce.BASE}projects/{project}/regions/{region}/routers"
        return self._listing("compute#routerList", link, items, query)

    def get_region(self, project: str, region: str, query: dict, body: Any) -> dict:
        """regions.get: the region, its zones, and ``quotas[]`` with the limit and usage of each
        TPU metric compute.v1.json's enum names: quota_limits.region_quotas."""
        zones = [z for z in instance_rules.zones() if ce.region_of(z) == region]
        if not zones:
            raise ApiError(
                404, "notFound", f"The resource 'projects/{project}/regions/{region}' was not found"
            )
        return ce.region_resource(
            project,
            region,
            zones,
            quota_limits.region_quotas(self.s.faults, project, region),
        )

    def list_firewalls(self, project: str, query: dict, body: Any) -> dict:
        """The default network's prepopulated rules, which admit SSH from anywhere."""
        link = f"{ce.BASE}projects/{project}/global/firewalls"
        return self._listing("compute#firewallList", link, ce.default_firewalls(project), query)

    def insert_instance(self, project: str, zone: str, query: dict, body: Any) -> dict:
        return self.s.instances.insert(project, zone, body)

    def get_instance(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.instances.get(project, zone, name)

    def delete_instance(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.instances.delete(project, zone, name)

    def set_scheduling(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        return self.s.instances.set_scheduling(project, zone, name, body)

    def get_operation(self, project: str, zone: str, name: str, query: dict, body: Any) -> dict:
        instance_rules.require_zone(zone)
        return self.s.zone_operations.get(project, zone, name)

    def list_operations(self, project: str, zone: str, query: dict, body: Any) -> dict:
        """zoneOperations.list: a failed Flex-start create shows only here (ce:62-63)."""
        instance_rules.require_zone(zone)
        wanted = parse_filter(query.get("filter", ""))
        ops = [op for op in self.s.zone_operations.listing(project, zone) if matches(wanted, op)]
        link = f"{ce.zone_url(project, zone)}/operations"
        return self._listing("compute#operationList", link, ops, query)

    def aggregated_operations(self, project: str, query: dict, body: Any) -> dict:
        wanted = parse_filter(query.get("filter", ""))
        items: dict[str, Any] = {}
        for scope, ops in self.s.zone_operations.scopes(project).items():
            mine = [op for op in ops if matches(wanted, op)]
            if mine:
                items[scope] = {"operations": mine}
        link = f"{ce.BASE}projects/{project}/aggregated/operations"
        return {
            "kind": "compute#operationAggregatedList",
            "id": link,
            "items": items,
            "selfLink": link,
        }

    def get_image_from_family(self, project: str, family: str, query: dict, body: Any) -> dict:
        return compute_images.from_family(project, family)

    def get_image(self, project: str, name: str, query: dict, body: Any) -> dict:
        return compute_images.by_name(project, name)
