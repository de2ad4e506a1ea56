"""OS Login: when it is on, a VM ignores the ``ssh-keys`` in its metadata (google-behaviour.md:60),
so tpuwizard's own key is refused ("Permission denied (publickey)") after minutes of retries on a
node that bills. On when the project's metadata says ``enable-oslogin`` or the organisation's
policy ``constraints/compute.requireOsLogin`` enforces it; with ``enable-oslogin-2fa`` a second
factor is asked, which tpuwizard's SSH cannot answer. The caller also needs
``compute.instances.osLogin`` (testIamPermissions; accounts outside the organisation also need
``roles/compute.osLoginExternalUser``).

With tpuwizard's own SSH on such a project, the launch imports its key into the caller's OS Login
profile (users.importSshPublicKey, :mod:`tpuwizard.core.cloud.oslogin`) and logs in as the POSIX
user that answers: a PASS whose ``launch_does`` is :data:`IMPORT_KEY`. With a second factor it
cannot log in, and ``--transport gcloud`` (gcloud's SSH handles OS Login) is the way in. Where
nothing logs in at all (practice without an OpenSSH server: a local shell), nothing is imported,
and the PASS says so rather than promising an import.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, in_parallel, passed, unknown
from tpuwizard.core.preflight.rest import COMPUTE, ORG_POLICY, RESOURCE_MANAGER, Answer, cannot_read

NAME = "OS Login"
PERMISSION = "compute.instances.osLogin"
REQUIRE_OS_LOGIN = "compute.requireOsLogin"
IMPORT_KEY = "import-os-login-key"  # Check.launch_does: import the key, log in as its POSIX user


@dataclass(frozen=True)
class OsLoginFacts:
    """What was read: each None where it could not be (``unread`` holds those lines)."""

    metadata_on: bool | None
    two_factor: bool | None
    policy_on: bool | None
    may_log_in: bool | None
    unread: tuple[Check, ...] = ()


def policy_enforced(policy: dict[str, Any]) -> bool:
    """A boolean constraint's effective policy: enforced when a rule says so (Org Policy v2:
    ``spec.rules[].enforce``; an unset policy has no rules: the constraint's default, off)."""
    rules = (policy.get("spec") or {}).get("rules") or []
    return any(r.get("enforce") is True for r in rules if isinstance(r, dict))


def metadata_flags(project: dict[str, Any]) -> tuple[bool, bool]:
    """(enable-oslogin, enable-oslogin-2fa) from a Compute Engine project resource."""
    items = (project.get("commonInstanceMetadata") or {}).get("items") or []
    values = {str(i.get("key", "")).lower(): str(i.get("value", "")) for i in items}
    on = values.get("enable-oslogin", "").strip().upper() == "TRUE"
    two = values.get("enable-oslogin-2fa", "").strip().upper() == "TRUE"
    return on, two


def read_facts(ask: PreflightAsk, reach: Reach) -> OsLoginFacts:
    assert reach.rest is not None
    rest, ep, p = reach.rest, reach.endpoints, ask.project
    project, policy, permission = in_parallel(
        lambda: rest.get(f"{ep.compute}/compute/v1/projects/{p}"),
        lambda: rest.get(
            f"{ep.org_policy}/v2/projects/{p}/policies/{REQUIRE_OS_LOGIN}:getEffectivePolicy"
        ),
        lambda: rest.post(
            f"{ep.resource_manager}/v1/projects/{p}:testIamPermissions",
            {"permissions": [PERMISSION]},
        ),
    )
    unread: list[Check] = []

    def read(answer: Answer, service: str, what: str) -> dict[str, Any] | None:
        if answer.ok:
            return answer.body
        unread.append(cannot_read(NAME, answer, service, p, what))
        return None

    meta = read(project, COMPUTE, "the project's metadata")
    pol = read(policy, ORG_POLICY, f"the organisation policy {REQUIRE_OS_LOGIN}")
    perm = read(permission, RESOURCE_MANAGER, f"whether you hold {PERMISSION}")
    flags = metadata_flags(meta) if meta is not None else None
    return OsLoginFacts(
        metadata_on=None if flags is None else flags[0],
        two_factor=None if flags is None else flags[1],
        policy_on=None if pol is None else policy_enforced(pol),
        may_log_in=None if perm is None else PERMISSION in (perm.get("permissions") or []),
        unread=tuple(unread),
    )


def check_os_login(ask: PreflightAsk, reach: Reach) -> Check:
    if reach.rest is None:
        return unknown(NAME, "no credentials to read it with")
    return judge(ask, read_facts(ask, reach))


def judge(ask: PreflightAsk, facts: OsLoginFacts) -> Check:
    """The rule, from what was read (``ask.transport`` gcloud: gcloud's own SSH, which handles
    OS Login)."""
    why = [
        w
        for w, on in (
            ("the project's metadata sets enable-oslogin", facts.metadata_on),
            (f"the organisation enforces {REQUIRE_OS_LOGIN}", facts.policy_on),
        )
        if on
    ]
    gcloud_fix = (
        "--backend tpu-api --transport gcloud"
        if ask.backend == COMPUTE_BACKEND
        else "--transport gcloud"
    )
    if not why:
        if facts.metadata_on is None or facts.policy_on is None:
            first = facts.unread[0]
            return unknown(NAME, f"not known whether it is on: {first.detail}", first.fix)
        return passed(NAME, "off: the VM takes tpuwizard's key from its metadata")
    on = f"on ({' and '.join(why)})"
    if facts.two_factor:
        return failed(
            NAME,
            f"{on} with a second factor (enable-oslogin-2fa), which tpuwizard's SSH cannot "
            "answer: use --transport gcloud",
            f"add {gcloud_fix} to the command",
        )
    if facts.may_log_in is False:
        return failed(
            NAME,
            f"{on}, and you lack {PERMISSION} (role OS Login; accounts outside the "
            "organisation also need roles/compute.osLoginExternalUser): SSH would be refused",
            f"gcloud projects add-iam-policy-binding {ask.project} "
            '--member="user:$(gcloud config get-value account)" --role=roles/compute.osLogin',
        )
    if ask.transport == Transport.GCLOUD:
        return passed(NAME, f"{on}: --transport gcloud logs in through OS Login")
    if not ask.ssh_login:
        return passed(
            NAME,
            f"{on}: practice reaches its workers through a local shell, not SSH, so no key is "
            "imported (with an OpenSSH server paired, or on a real VM, tpuwizard imports its "
            "key into your OS Login profile and logs in as your POSIX user)",
        )
    imports = passed(
        NAME,
        f"{on}: the VM ignores the ssh-keys in its metadata, so tpuwizard imports its key into "
        "your OS Login profile (until the launch's deadline) and logs in as your POSIX user",
    )
    return dataclasses.replace(imports, launch_does=IMPORT_KEY)
