"""The APIs a preflight reads, served beside the TPU API (same port, same token), as Google does.

Service Usage v1 (services.get, services.batchGet), Cloud Billing v1 (projects.getBillingInfo),
Cloud Quotas v1 (quotaInfos get and list, :mod:`tpuwizard.sandbox.quota_limits`), OS Login v1
(users.getLoginProfile, users.importSshPublicKey, users.sshPublicKeys.delete,
:mod:`tpuwizard.sandbox.oslogin`) and Org Policy v2 (projects.policies.getEffectivePolicy). Paths
and shapes are the discovery documents' (serviceusage.v1.json, cloudbilling.v1.json,
oslogin.v1.json, orgpolicy.v2.json) and Cloud Quotas' REST reference; errors are Google's JSON
shape. docs/preflight-sandbox.md lists every path and body. What each answers follows the
project's faults (faults.py); the counted faults (unavailable=N, forbidden=N...) are the TPU and
Compute Engine APIs' and do not answer here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from tpuwizard.sandbox import billing_catalog, google, oslogin, quota_limits
from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import ApiError, error_body

if TYPE_CHECKING:
    from tpuwizard.sandbox.state import SandboxState

_P = r"^/v1/projects/(?P<project>[^/:]+)"
_QUOTAS = _P + r"/locations/global/services/(?P<service>[^/:]+)/quotaInfos"
ROUTES: list[tuple[str, re.Pattern[str], str, str]] = [
    # (method, path, handler, the service whose API it is)
    (m, re.compile(p + "$"), h, s)
    for m, p, h, s in [
        ("GET", _P + r"/services:batchGet", "batch_get_services", "serviceusage"),
        ("GET", _P + r"/services/(?P<service>[^/:]+)", "get_service", "serviceusage"),
        ("GET", _P + r"/billingInfo", "get_billing_info", "cloudbilling"),
        ("GET", r"^/v1/services/(?P<service>[^/:]+)/skus", "list_skus", "cloudbilling"),
        ("GET", _QUOTAS, "list_quota_infos", "cloudquotas"),
        ("GET", _QUOTAS + r"/(?P<quota>[^/:]+)", "get_quota_info", "cloudquotas"),
        ("GET", r"^/v1/users/(?P<user>[^/:]+)/loginProfile", "get_login_profile", "oslogin"),
        ("POST", r"^/v1/users/(?P<user>[^/:]+):importSshPublicKey", "import_ssh_key", "oslogin"),
        (
            "DELETE",
            r"^/v1/users/(?P<user>[^/:]+)/sshPublicKeys/(?P<fingerprint>[^/:]+)",
            "delete_ssh_key",
            "oslogin",
        ),
        (
            "GET",
            r"^/v2/projects/(?P<project>[^/:]+)/policies/(?P<constraint>[^/:]+):getEffectivePolicy",
            "get_effective_policy",
            "orgpolicy",
        ),
    ]
]
TITLES = {
    "tpu.googleapis.com": "Cloud TPU API",
    "compute.googleapis.com": "Compute Engine API",
    "serviceusage.googleapis.com": "Service Usage API",
    "cloudbilling.googleapis.com": "Cloud Billing API",
    "cloudquotas.googleapis.com": "Cloud Quotas API",
    "oslogin.googleapis.com": "Cloud OS Login API",
    "orgpolicy.googleapis.com": "Organization Policy API",
}
PREFLIGHT_SERVICES = {f"{route[3]}.googleapis.com" for route in ROUTES}
# The constraints the preflight reads; any other answers as one no policy sets.
EXTERNAL_IP = "compute.vmExternalIpAccess"
REQUIRE_OSLOGIN = "compute.requireOsLogin"
BILLING_ACCOUNT = "billingAccounts/012345-6789AB-CDEF01"


def serves(path: str) -> bool:
    return any(pattern.match(path) for _m, pattern, _h, _s in ROUTES)


def answer(
    state: SandboxState,
    method: str,
    path: str,
    raw_query: str,
    raw: bytes,
    authenticate: Callable[[], None],
    user_project: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON) for one request to a path :func:`serves`; ``user_project``: its
    ``x-goog-user-project`` header (the quota project google-auth sends when it has one)."""
    try:
        authenticate()
        query = parse_qs(raw_query)
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            raise ApiError(400, "INVALID_ARGUMENT", "The body is not JSON.") from None
        for route_method, pattern, handler, service in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            if route_method != method:
                raise ApiError(404, "NOT_FOUND", f"No such method: {method} {path}")
            args = {k: unquote(v) for k, v in match.groupdict().items()}
            api = f"{service}.googleapis.com"
            refuse_if_disabled(state.faults, api, args.get("project"))
            if not user_project and needs_quota_project(state.faults, api):
                raise quota_project_missing(api, args.get("project"))
            with state.store.transaction():
                return 200, getattr(Methods(state), handler)(query=query, body=body, **args)
        raise ApiError(404, "NOT_FOUND", f"No such method: {method} {path}")
    except ApiError as err:
        return err.http, error_body(err.http, err.status, err.message, err.details)


def service_state(faults: Faults, service: str) -> str:
    """ENABLED, unless the fault disabled_services names it, or (for the two APIs it answers
    for) api_disabled still has requests to refuse."""
    if service in faults.disabled_services:
        return "DISABLED"
    if service in ("tpu.googleapis.com", "compute.googleapis.com") and faults.left("api_disabled"):
        return "DISABLED"
    return "ENABLED"


def refuse_if_disabled(faults: Faults, service: str, project: str | None) -> None:
    """An API that is off answers 403 SERVICE_DISABLED, in the words it uses for the TPU API
    (injected.py)."""
    if service not in faults.disabled_services:
        return
    title = TITLES.get(service, service)
    consumer = project or "the caller's quota project"
    raise ApiError(
        403,
        "PERMISSION_DENIED",
        f"{title} has not been used in project {consumer} before or it is disabled. Enable it by "
        f"visiting https://console.developers.google.com/apis/api/{service}/overview"
        f"?project={consumer} then retry.",
        [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "SERVICE_DISABLED",
                "domain": "googleapis.com",
                "metadata": {"service": service, "consumer": f"projects/{consumer}"},
            }
        ],
    )


def needs_quota_project(faults: Faults, service: str) -> bool:
    wanted = faults.needs_quota_project
    return service in wanted or ("*" in wanted and service in PREFLIGHT_SERVICES)


def quota_project_missing(service: str, project: str | None) -> ApiError:
    """User credentials from ``gcloud auth application-default login`` carry no quota project,
    and some APIs refuse them: Google's text and detail as reported
    (GoogleCloudPlatform/cloud-foundation-fabric#2622,
    googleapis/google-auth-library-python#1459)."""
    consumer = f"projects/{google.project_number(project)}" if project else "projects/unknown"
    return ApiError(
        403,
        "PERMISSION_DENIED",
        "Your application is authenticating by using local Application Default Credentials. The "
        f"{service} API requires a quota project, which is not set by default. To learn how to "
        "set your quota project, see "
        "https://cloud.google.com/docs/authentication/adc-troubleshooting/user-creds .",
        [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "SERVICE_DISABLED",
                "domain": "googleapis.com",
                "metadata": {"service": service, "consumer": consumer},
            }
        ],
    )


class Methods:
    """One method per route; each returns the JSON to answer with (the state's lock held)."""

    def __init__(self, state: SandboxState) -> None:
        self.s = state
        self.faults = state.faults

    # --- Service Usage -----------------------------------------------------------------------

    def service(self, project: str, service: str) -> dict[str, Any]:
        parent = f"projects/{google.project_number(project)}"
        return {
            "name": f"{parent}/services/{service}",
            "parent": parent,
            "config": {"name": service, "title": TITLES.get(service, service)},
            "state": service_state(self.faults, service),
        }

    def get_service(self, project: str, service: str, query: dict, body: dict) -> dict:
        return self.service(project, service)

    def batch_get_services(self, project: str, query: dict, body: dict) -> dict:
        names = query.get("names", [])
        if not names:
            raise ApiError(400, "INVALID_ARGUMENT", "names: at least one service name is needed.")
        if len(names) > 30:  # serviceusage.v1.json: "A single request can get a maximum of 30"
            raise ApiError(400, "INVALID_ARGUMENT", "names: at most 30 services per request.")
        found = []
        for name in names:
            head, sep, service = name.rpartition("/services/")
            if not sep or not head.startswith("projects/"):
                raise ApiError(
                    400, "INVALID_ARGUMENT", f"Invalid name '{name}': use projects/P/services/S."
                )
            found.append(self.service(project, service))
        return {"services": found}

    # --- Cloud Billing -----------------------------------------------------------------------

    def get_billing_info(self, project: str, query: dict, body: dict) -> dict:
        linked = not self.faults.no_billing
        return {
            "name": f"projects/{project}/billingInfo",
            "projectId": project,
            "billingAccountName": BILLING_ACCOUNT if linked else "",
            "billingEnabled": linked,
        }

    def list_skus(self, service: str, query: dict, body: dict) -> dict:
        """The Billing Catalog's SKUs (billing_catalog.py): the offline table's figures."""
        return billing_catalog.list_skus(self.faults, service, query)

    # --- Cloud Quotas ------------------------------------------------------------------------

    def list_quota_infos(self, project: str, service: str, query: dict, body: dict) -> dict:
        every = quota_limits.quotas(service)
        infos = [quota_limits.quota_info(self.faults, project, q) for q in every]
        size = int((query.get("pageSize") or ["0"])[-1] or 0) or 100
        start = int((query.get("pageToken") or ["0"])[-1] or 0)
        out: dict[str, Any] = {"quotaInfos": infos[start : start + size]}
        if start + size < len(infos):
            out["nextPageToken"] = str(start + size)
        return out

    def get_quota_info(
        self, project: str, service: str, quota: str, query: dict, body: dict
    ) -> dict:
        found = quota_limits.find(service, quota)
        if found is None:
            raise ApiError(
                404,
                "NOT_FOUND",
                f"QuotaInfo 'projects/{project}/locations/global/services/{service}/quotaInfos/"
                f"{quota}' was not found.",
            )
        return quota_limits.quota_info(self.faults, project, found)

    # --- OS Login ----------------------------------------------------------------------------

    def get_login_profile(self, user: str, query: dict, body: dict) -> dict:
        project = (query.get("projectId") or [None])[-1]
        return oslogin.login_profile(self.s.data, user, project)

    def import_ssh_key(self, user: str, query: dict, body: dict) -> dict:
        oslogin.import_key(self.s.data, user, body)
        self.s.vms.sync_keys()
        self.s.store.save()
        project = (query.get("projectId") or [None])[-1]
        return {"loginProfile": oslogin.login_profile(self.s.data, user, project)}

    def delete_ssh_key(self, user: str, fingerprint: str, query: dict, body: dict) -> dict:
        oslogin.delete_key(self.s.data, user, fingerprint)
        self.s.vms.sync_keys()
        self.s.store.save()
        return {}

    # --- Org Policy --------------------------------------------------------------------------

    def get_effective_policy(self, project: str, constraint: str, query: dict, body: dict) -> dict:
        if self.faults.orgpolicy_unreadable:
            raise ApiError(
                403,
                "PERMISSION_DENIED",
                f"Permission 'orgpolicy.policy.get' denied on resource "
                f"'projects/{project}/policies/{constraint}'.",
            )
        rule: dict[str, Any]
        if constraint == EXTERNAL_IP:  # a list constraint
            rule = {"denyAll": True} if self.faults.no_external_ip else {"allowAll": True}
        elif constraint == REQUIRE_OSLOGIN:  # a boolean one
            rule = {"enforce": self.faults.oslogin_policy}
        else:
            rule = {"allowAll": True}
        return {
            "name": f"projects/{google.project_number(project)}/policies/{constraint}",
            "spec": {"rules": [rule]},
        }
