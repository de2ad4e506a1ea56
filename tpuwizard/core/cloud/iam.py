"""Before create: can the on-VM watchdog run? (reference/google-behaviour.md, "actAs" and "The
watchdog's calls are right".)

Two things must hold. The caller must be allowed to attach the node's service account
(``iam.serviceAccounts.actAs``, role Service Account User), asked with IAM's
``serviceAccounts.testIamPermissions``; and that account must hold a role that may delete TPUs,
read from the project's IAM policy (``projects.getIamPolicy``). In organisations created since
May 2024 the default compute account has no roles, so the answer there is usually "no".

When the policy cannot be read the answer is ``None`` ("unknown"): the watchdog is armed as
before and its own check on worker 0 decides after create. :func:`decide` is the whole rule and
makes no call; :func:`check_watchdog` makes the calls with google-auth's ``AuthorizedSession``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

IAM_ENDPOINT = "https://iam.googleapis.com"
CRM_ENDPOINT = "https://cloudresourcemanager.googleapis.com"
ACT_AS = "iam.serviceAccounts.actAs"
# Predefined roles that carry tpu.nodes.delete, the one place they are listed. Sources: Google's
# "Cloud TPU roles" page (roles/tpu.admin) and the basic roles (roles/owner, roles/editor carry
# every *.delete of the services they cover); google-behaviour.md "On the VM".
DELETE_ROLES = ("roles/tpu.admin", "roles/owner", "roles/editor")
DEFAULT_ACCOUNT_DOMAIN = "-compute@developer.gserviceaccount.com"


@dataclass(frozen=True)
class WatchdogCheck:
    """The answer before create. ``can_arm``: True yes, False no (``reason`` says why and
    ``fix`` is the command that grants what is missing), None unknown (arm and let the check on
    the VM decide)."""

    can_arm: bool | None
    reason: str
    account: str
    fix: str | None = None
    short: str = ""  # the reason in a few words, for a screen of 80x24 ("because ...")
    # May the caller attach ``account`` to a VM (actAs)? False: a create that attaches it is
    # refused with 403, so no plan may (LaunchPlan.problems()); None: not known.
    may_attach: bool | None = None

    @property
    def arm_by_default(self) -> bool:
        return self.can_arm is not False


def default_account(project_number: str | int) -> str:
    return f"{project_number}{DEFAULT_ACCOUNT_DOMAIN}"


def decide(
    project: str,
    account: str,
    act_as: bool | None,
    policy: dict[str, Any] | None,
    is_default: bool = False,
) -> WatchdogCheck:
    """The rule. ``act_as``: whether the caller may attach ``account`` (None: not known);
    ``policy``: the project's IAM policy, or None when it could not be read."""
    if act_as is False:
        return WatchdogCheck(
            False,
            f"you may not attach the service account {account} to a VM (that needs "
            f"{ACT_AS}, role Service Account User)",
            account,
            f"gcloud iam service-accounts add-iam-policy-binding {account} --project {project} "
            '--member="user:$(gcloud config get-value account)" '
            "--role=roles/iam.serviceAccountUser",
            "you may not attach its service account",
            may_attach=False,
        )
    if policy is None:
        return WatchdogCheck(
            None,
            f"the project's IAM policy could not be read, so whether {account} may delete "
            "TPUs is not known; the watchdog checks on the VM after create and says so",
            account,
            may_attach=act_as,
        )
    member = f"serviceAccount:{account}"
    roles = {
        str(b.get("role")) for b in policy.get("bindings", []) if member in b.get("members", [])
    }
    unconditional = {
        str(b.get("role"))
        for b in policy.get("bindings", [])
        if member in b.get("members", []) and not b.get("condition")
    }
    if unconditional & set(DELETE_ROLES):
        if act_as is None:
            return WatchdogCheck(
                None,
                f"{account} may delete TPUs, but whether you may attach it is not known",
                account,
            )
        role = sorted(unconditional & set(DELETE_ROLES))[0]
        return WatchdogCheck(
            True, f"{account} has {role}, which may delete TPUs", account, may_attach=True
        )
    custom = {r for r in roles if not r.startswith("roles/")}
    if (roles & set(DELETE_ROLES)) or custom:
        return WatchdogCheck(
            None,
            f"{account} has a conditional or custom role; whether it may delete TPUs is not "
            "known, so the watchdog checks on the VM after create",
            account,
            may_attach=act_as,
        )
    why = (
        " (organisations created since May 2024 give the default compute account no roles)"
        if is_default
        else ""
    )
    return WatchdogCheck(
        False,
        f"the VM's service account {account} may not delete TPUs: it has no role with "
        f"tpu.nodes.delete{why}",
        account,
        f"gcloud projects add-iam-policy-binding {project} "
        f"--member=serviceAccount:{account} --role=roles/tpu.admin",
        "its service account may not delete TPUs",
        may_attach=act_as,
    )


def endpoints_for(tpu_endpoint: str, google_tpu_endpoint: str) -> tuple[str, str]:
    """(IAM, Resource Manager): Google's with Google's TPU API; else the stand-in serves all."""
    if tpu_endpoint == google_tpu_endpoint:
        return IAM_ENDPOINT, CRM_ENDPOINT
    return tpu_endpoint, tpu_endpoint


def check_watchdog(
    credentials: Any,
    project: str,
    service_account: str | None,
    iam_endpoint: str = IAM_ENDPOINT,
    crm_endpoint: str = CRM_ENDPOINT,
    timeout: float = 30.0,
) -> WatchdogCheck:
    """Ask Google (or the sandbox) and :func:`decide`. Never raises for a refused call: a call
    that fails leaves its part unknown."""
    from google.auth.transport.requests import AuthorizedSession

    session = AuthorizedSession(credentials)

    def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        try:
            response = session.post(url, json=body, timeout=timeout)
        except Exception:
            return 0, {}
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        return response.status_code, payload if isinstance(payload, dict) else {}

    account = service_account
    if not account:
        try:
            response = session.get(f"{crm_endpoint}/v1/projects/{project}", timeout=timeout)
            number = response.json().get("projectNumber") if response.status_code == 200 else None
        except Exception:
            number = None
        if not number:
            return WatchdogCheck(
                None,
                "the project's number (which names its default compute account) could not be "
                "read; the watchdog checks on the VM after create",
                default_account("PROJECT_NUMBER"),
            )
        account = default_account(number)
    # gb:45 actAs; IAM: POST v1/projects/-/serviceAccounts/EMAIL:testIamPermissions.
    status, payload = post(
        f"{iam_endpoint}/v1/projects/-/serviceAccounts/{account}:testIamPermissions",
        {"permissions": [ACT_AS]},
    )
    act_as: bool | None = None
    if status == 200:
        act_as = ACT_AS in payload.get("permissions", [])
    elif status == 404:
        act_as = False  # no such account: attaching it would fail too
    status, payload = post(
        f"{crm_endpoint}/v1/projects/{project}:getIamPolicy",
        {"options": {"requestedPolicyVersion": 3}},
    )
    policy = payload if status == 200 else None
    return decide(project, account, act_as, policy, is_default=not service_account)
