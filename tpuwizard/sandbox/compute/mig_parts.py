"""The regional parts of a multi-host slice on Compute Engine: workload policies and templates.

A part of :class:`~tpuwizard.sandbox.state.SandboxState`, given the state file and the
operations. Resource policies (``store.data["resource_policies"]``) and regional instance templates
(``store.data["instance_templates"]``) are keyed by their path (``projects/P/regions/R/...``);
both are made and deleted at once, their regional operation DONE as it starts. Rules cite
``reference/compute-engine.md`` ("ce:LINE") or Google's text where the sandbox found it
(docs/compute-engine-sandbox.md).
"""

from __future__ import annotations

from typing import Any

from tpuwizard.sandbox.compute import google as ce
from tpuwizard.sandbox.compute import instance_rules
from tpuwizard.sandbox.compute.zone_operations import ZoneOperations, rfc3339
from tpuwizard.sandbox.model import ApiError, public
from tpuwizard.sandbox.store import StateStore

POLICY_FIELDS = ("description", "workloadPolicy", "groupPlacementPolicy")
TEMPLATE_FIELDS = ("description", "properties")
# Output-only in compute.v1.json (ResourcePolicy.region, InstanceTemplate.region: "readOnly"), yet
# gcloud 528 always sends the region's name in a regional insert, and Google serves it: accepted,
# and the resource's own region (from the path) is what it reads back.
OUTPUT_ONLY_SENT = ("region",)
# compute.v1.json InstanceProperties.machineType: "This field only accepts a machine type name
# ... If you use the machine type full or partial URL ... the request will result in an
# INTERNAL_ERROR".
TEMPLATE_URL_ERROR = {
    "code": "INTERNAL_ERROR",
    "message": "Internal error. Please try again or contact Google Support. "
    "(Code: '-2849711541983527296')",
}


def short_link(link: Any, project: str) -> str:
    """A full, partial or project-less URL of a resource -> its path ``projects/P/...``."""
    text = str(link or "").split("/compute/v1/")[-1]
    return text if text.startswith("projects/") else f"projects/{project}/{text}"


def region_url(project: str, region: str) -> str:
    return f"{ce.BASE}projects/{project}/regions/{region}"


def scope_path(project: str, region: str | None) -> str:
    """``projects/P/regions/R``, or ``projects/P/global`` for a global resource (None)."""
    return f"projects/{project}/regions/{region}" if region else f"projects/{project}/global"


def require_region(region: str) -> None:
    if region not in {ce.region_of(z) for z in instance_rules.zones()}:
        raise instance_rules.invalid("region", region, "Unknown region.")


def in_use(kind: str, key: str, user: str) -> ApiError:
    """Deleting what another resource uses: HTTP 400 resourceInUseByAnotherResource, in Google's
    words as users quote them ("The ssl_policy resource 'projects/P/global/sslPolicies/X' is
    already being used by 'projects/P/global/targetHttpsProxies/Y'")."""
    return ApiError(
        400,
        "resourceInUseByAnotherResource",
        f"The {kind} resource '{key}' is already being used by '{user}'",
    )


def unknown_fields(body: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """A field the resource does not have (``labels`` on a ResourcePolicy or an
    InstanceGroupManager: compute.v1.json has none there) is refused as Google's JSON front end
    refuses it, not dropped."""
    for key in body:
        if key not in allowed:
            raise ApiError(
                400,
                "invalid",
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': "
                "Cannot find field.",
            )


def check_name(name: Any) -> str:
    text = str(name or "")
    if not instance_rules.NAME_RE.fullmatch(text):
        raise instance_rules.invalid(
            "resource.name",
            text,
            "Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'",
        )
    return text


class SliceParts:
    """Resource policies and regional instance templates, and who uses them."""

    def __init__(self, store: StateStore, operations: ZoneOperations) -> None:
        self.store = store
        self.operations = operations

    @property
    def policies(self) -> dict[str, Any]:
        return self.store.data.get("resource_policies", {})

    @property
    def templates(self) -> dict[str, Any]:
        return self.store.data.get("instance_templates", {})

    def _new(self, project: str, region: str | None, kind: str, table: str, body: dict) -> dict:
        """The record of a new regional (or, ``region`` None, global) resource."""
        name = check_name(body.get("name"))
        key = f"{scope_path(project, region)}/{kind}/{name}"
        if key in self.store.data.get(table, {}):
            raise ApiError(409, "alreadyExists", f"The resource '{key}' already exists")
        self.store.data["counter"] += 1
        record = {
            "id": str(ce.ID_BASE + self.store.data["counter"]),
            "creationTimestamp": rfc3339(),
            "name": name,
            "selfLink": f"{ce.BASE}{key}",
            "_name": key,
        }
        if region:
            record["region"] = region_url(project, region)
        return record

    def _done(self, project: str, region: str | None, kind: str, record: dict, error=None) -> dict:
        """The insert's or delete's operation, DONE at once: regional, or global (``region``
        None)."""
        if region:
            op = self.operations.start_regional(
                project, region, kind, record["_name"], record["id"]
            )
        else:
            op = self.operations.start_global(project, kind, record["_name"], record["id"])
        self.operations.finish(op, error)
        self.store.save()
        return public(op)

    # --- resource policies ---------------------------------------------------------------

    def insert_policy(self, project: str, region: str, body: dict[str, Any]) -> dict[str, Any]:
        require_region(region)
        unknown_fields(body, ("name", *POLICY_FIELDS, *OUTPUT_ONLY_SENT), "resource")
        workload = body.get("workloadPolicy")
        if workload is not None and workload.get("type") != "HIGH_THROUGHPUT":
            # ce:70 TPU slices use HIGH_THROUGHPUT with an acceleratorTopology.
            raise instance_rules.invalid(
                "resource.workloadPolicy.type",
                workload.get("type", ""),
                "A TPU slice's workload policy is HIGH_THROUGHPUT.",
            )
        if workload is not None and not workload.get("acceleratorTopology"):
            raise instance_rules.invalid(
                "resource.workloadPolicy.acceleratorTopology", "", "Name the slice's topology."
            )
        record = self._new(project, region, "resourcePolicies", "resource_policies", body)
        record.update({k: body[k] for k in POLICY_FIELDS if k in body})
        record.update(kind="compute#resourcePolicy", status="READY")
        self.store.data.setdefault("resource_policies", {})[record["_name"]] = record
        return self._done(project, region, "insert", record)

    def policy(self, project: str, region: str, name: str) -> dict[str, Any]:
        require_region(region)
        key = f"projects/{project}/regions/{region}/resourcePolicies/{name}"
        if key not in self.policies:
            raise ApiError(404, "notFound", f"The resource '{key}' was not found")
        return self.policies[key]

    def delete_policy(self, project: str, region: str, name: str) -> dict[str, Any]:
        found = self.policy(project, region, name)
        for user in self.users_of(found["selfLink"]):
            raise in_use("resource_policy", found["_name"], user)
        del self.policies[found["_name"]]
        return self._done(project, region, "delete", found)

    # --- instance templates ---------------------------------------------------------------

    def insert_template(
        self, project: str, region: str | None, body: dict[str, Any]
    ) -> dict[str, Any]:
        """A regional instance template, or a global one (``region`` None): the course's Route 2B
        makes a global one (``gcloud beta compute instance-templates create`` without
        ``--instance-template-region``; compute.v1.json instanceTemplates.insert)."""
        if region:
            require_region(region)
        sent = ("name", *TEMPLATE_FIELDS, *(OUTPUT_ONLY_SENT if region else ()))
        unknown_fields(body, sent, "resource")
        properties = dict(body.get("properties") or {})
        record = self._new(project, region, "instanceTemplates", "instance_templates", body)
        if "/" in str(properties.get("machineType", "")):
            return self._done(project, region, "insert", record, TEMPLATE_URL_ERROR)
        machine = str(properties.get("machineType") or "")
        zones = [z for z in instance_rules.zones() if region in (None, ce.region_of(z))]
        if machine.startswith(ce.REFUSED_PREFIXES):  # ce:14-16, Google's words
            raise ApiError(
                403,
                "forbidden",
                f"This user agent is not allowed to use the machine type [{machine}]",
            )
        if not any(ce.machine_type(z, machine) for z in zones):
            raise instance_rules.invalid(
                "resource.properties.machineType",
                machine,
                f"Machine type with name '{machine}' does not exist in "
                + (f"region '{region}'." if region else "any zone."),
            )
        scheduling = properties.get("scheduling") or {}
        instance_rules.check_scheduling(scheduling, scheduling.get("provisioningModel", "STANDARD"))
        if not properties.get("disks"):
            raise instance_rules.invalid("resource.properties.disks", "", "A VM needs a boot disk.")
        record.update(kind="compute#instanceTemplate", properties=properties)
        if "description" in body:
            record["description"] = body["description"]
        self.store.data.setdefault("instance_templates", {})[record["_name"]] = record
        return self._done(project, region, "insert", record)

    def template(self, project: str, region: str | None, name: str) -> dict[str, Any]:
        if region:
            require_region(region)
        key = f"{scope_path(project, region)}/instanceTemplates/{name}"
        if key not in self.templates:
            raise ApiError(404, "notFound", f"The resource '{key}' was not found")
        return self.templates[key]

    def template_by_link(self, link: Any, project: str) -> dict[str, Any] | None:
        return self.templates.get(short_link(link, project))

    def policy_by_link(self, link: Any, project: str) -> dict[str, Any] | None:
        return self.policies.get(short_link(link, project))

    def delete_template(self, project: str, region: str | None, name: str) -> dict[str, Any]:
        found = self.template(project, region, name)
        for user in self.users_of(found["selfLink"]):
            raise in_use("instance_template", found["_name"], user)
        del self.templates[found["_name"]]
        return self._done(project, region, "delete", found)

    def users_of(self, link: str) -> list[str]:
        """The MIGs (and templates) that name ``link``: their paths."""
        short = link.removeprefix(ce.BASE)
        project = short.split("/")[1]
        users = []
        for key, mig in sorted(self.store.data.get("migs", {}).items()):
            named = [mig.get("instanceTemplate"), mig["resourcePolicies"].get("workloadPolicy")]
            if any(n and short_link(n, project) == short for n in named):
                users.append(key)
        for key, template in sorted(self.templates.items()):
            named = template["properties"].get("resourcePolicies") or []
            if any(short_link(n, project) == short for n in named):
                users.append(key)
        return users

    def listing(self, table: str, project: str, region: str | None) -> list[dict[str, Any]]:
        if region:
            require_region(region)
        prefix = f"{scope_path(project, region)}/"
        items = self.store.data.get(table, {})
        return [public(r) for k, r in sorted(items.items()) if k.startswith(prefix)]

    def scopes(self, table: str, project: str) -> dict[str, list[dict[str, Any]]]:
        """An aggregated list's items: each scope ("global", "regions/R") that holds any of
        ``table``'s resources, with them (resourcePolicies.aggregatedList,
        instanceTemplates.aggregatedList in compute.v1.json)."""
        out: dict[str, list[dict[str, Any]]] = {}
        prefix = f"projects/{project}/"
        for key, record in sorted(self.store.data.get(table, {}).items()):
            if key.startswith(prefix):
                scope = "/".join(key.split("/")[2:-2])  # "global" or "regions/R"
                out.setdefault(scope, []).append(public(record))
        return out
