"""Resource Manager's and IAM's calls, as the sandbox answers them: the watchdog's
testIamPermissions on the project, and the check before create (core/cloud/iam.py)."""

from __future__ import annotations

import re

from tpuwizard.sandbox import google
from tpuwizard.sandbox.faults import Faults

# The one Resource Manager call the watchdog makes, to learn whether the VM may delete itself.
IAM_RE = re.compile(r"^/v1/projects/(?P<project>[^/:]+):testIamPermissions$")
# The check before create (core/cloud/iam.py), gb:45 and gb:62-68: Resource Manager's
# projects.get and projects.getIamPolicy, and IAM's serviceAccounts.testIamPermissions (actAs).
PROJECT_RE = re.compile(r"^/v1/projects/(?P<project>[^/:]+)$")
POLICY_RE = re.compile(r"^/v1/projects/(?P<project>[^/:]+):getIamPolicy$")
ACT_AS_RE = re.compile(r"^/v1/projects/-/serviceAccounts/(?P<email>[^/:]+):testIamPermissions$")
OSLOGIN_PERMISSIONS = ("compute.instances.osLogin", "compute.instances.osAdminLogin")
# roles/iap.tunnelResourceAccessor's permissions (Google's IAP roles page; preflight-sandbox.md)
IAP_PERMISSIONS = ("iap.tunnelInstances.accessViaIAP", "iap.tunnelDestGroups.accessViaIAP")


def answer(faults: Faults, method: str, path: str, body: dict) -> dict | None:
    """The answer to an IAM or Resource Manager call; None: ``path`` is not one."""
    if IAM_RE.match(path) and method == "POST":
        return _test_iam_permissions(faults, body)
    if (m := PROJECT_RE.match(path)) and method == "GET":
        return google.project_resource(m["project"])
    if (m := POLICY_RE.match(path)) and method == "POST":
        if faults.policy_unreadable:
            raise google.policy_forbidden(m["project"])
        return google.iam_policy(m["project"], not faults.sa_no_delete)
    if ACT_AS_RE.match(path) and method == "POST":
        # Google answers with the subset of the asked permissions the caller holds ({} if
        # none): testIamPermissions itself is never refused for lacking them.
        wanted = [str(p) for p in body.get("permissions", [])]
        held = [p for p in wanted if not (faults.no_act_as and p.endswith(".actAs"))]
        return {"permissions": held} if held else {}
    return None


def _test_iam_permissions(faults: Faults, body: dict) -> dict:
    wanted = list(body.get("permissions", []))
    if faults.sa_no_delete:
        wanted = [p for p in wanted if not p.endswith(".delete")]
    if faults.oslogin_denied:  # the caller may not log in through OS Login
        wanted = [p for p in wanted if p not in OSLOGIN_PERMISSIONS]
    if faults.iap_denied:
        wanted = [p for p in wanted if p not in IAP_PERMISSIONS]
    # Google answers only the asked permissions the caller holds: none is an empty object.
    return {"permissions": wanted} if wanted else {}
