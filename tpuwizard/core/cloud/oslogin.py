"""OS Login keys: with OS Login on, a VM ignores the ``ssh-keys`` in its metadata
(google-behaviour.md:60) and accepts the keys in the caller's OS Login profile. So tpuwizard
imports its public key there (``users.importSshPublicKey``, expiring at the launch's deadline),
connects as the POSIX user the answer names, and deletes the key once the node is verified gone.

Calls are made with google-auth's ``AuthorizedSession``, as :mod:`tpuwizard.core.cloud.iam` does;
in practice the sandbox serves the same paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

OSLOGIN_ENDPOINT = "https://oslogin.googleapis.com"


class OsLoginError(RuntimeError):
    """An OS Login call was refused or unanswered; the message says which and what to do."""


@dataclass(frozen=True)
class LoginKey:
    """A key imported into ``user``'s profile: log in as ``username`` until ``expires_at``."""

    user: str  # the account's email: users/USER
    username: str  # the POSIX user the VM knows the account as
    fingerprint: str
    expires_at: float  # seconds since the epoch


def posix_username(profile: dict[str, Any]) -> str:
    """The POSIX user of a LoginProfile: the primary account's, else the only one's. Google
    derives it from the email (``jane_example_com``); it is not the email's local part."""
    accounts = [a for a in profile.get("posixAccounts") or [] if isinstance(a, dict)]
    named = [a for a in accounts if a.get("username")]
    primary = [a for a in named if a.get("primary") is True]
    chosen = primary or named
    if not chosen:
        raise OsLoginError(
            "Your OS Login profile has no POSIX account, so no VM would let you log in. "
            "Fix: use --transport gcloud (gcloud creates it), or ask an admin to grant "
            "roles/compute.osLogin."
        )
    return str(chosen[0]["username"])


def fingerprint_of(profile: dict[str, Any], public_key: str) -> str:
    """The fingerprint under which ``profile`` holds ``public_key`` (its type and blob)."""
    ours = public_key.split()[:2]
    for fingerprint, entry in (profile.get("sshPublicKeys") or {}).items():
        if isinstance(entry, dict) and str(entry.get("key", "")).split()[:2] == ours:
            return str(entry.get("fingerprint") or fingerprint)
    raise OsLoginError("OS Login answered the import without the key tpuwizard imported.")


class OsLoginKeys:
    """Import and delete one account's keys (``users/USER``; ``project`` names the POSIX
    account Google answers for that project)."""

    def __init__(
        self,
        credentials: Any,
        project: str,
        endpoint: str = OSLOGIN_ENDPOINT,
        timeout: float = 30.0,
    ) -> None:
        from google.auth.transport.requests import AuthorizedSession

        self.session = AuthorizedSession(credentials)
        self.project, self.endpoint, self.timeout = project, endpoint.rstrip("/"), timeout

    def import_key(self, user: str, public_key: str, expires_at: float) -> LoginKey:
        url = f"{self.endpoint}/v1/users/{quote(user, safe='@')}:importSshPublicKey"
        body = {"key": public_key, "expirationTimeUsec": str(int(expires_at * 1_000_000))}
        answer = self._call("POST", url, "import tpuwizard's SSH key into", user, json=body)
        profile = answer.get("loginProfile") or {}
        return LoginKey(
            user, posix_username(profile), fingerprint_of(profile, public_key), expires_at
        )

    def delete_key(self, key: LoginKey) -> None:
        url = (
            f"{self.endpoint}/v1/users/{quote(key.user, safe='@')}/sshPublicKeys/{key.fingerprint}"
        )
        self._call("DELETE", url, "delete tpuwizard's SSH key from", key.user)

    def _call(self, method: str, url: str, what: str, user: str, **kwargs: Any) -> dict[str, Any]:
        params = {"projectId": self.project} if self.project else None
        try:
            response = self.session.request(
                method, url, params=params, timeout=self.timeout, **kwargs
            )
        except Exception as err:  # no answer: say so, with the way around it
            raise OsLoginError(
                f"Could not reach OS Login to {what} {user}'s profile ({type(err).__name__}). "
                "Fix: retry, or use --transport gcloud."
            ) from None
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        if response.status_code >= 400:
            message = (payload.get("error") or {}).get("message") if payload else None
            raise OsLoginError(
                f"OS Login refused to {what} {user}'s profile (HTTP {response.status_code}: "
                f"{message or response.reason}). Fix: `gcloud services enable "
                "oslogin.googleapis.com`, or use --transport gcloud."
            )
        return payload if isinstance(payload, dict) else {}


def account_email(credentials: Any) -> str | None:
    """The account the credentials act for: a service account's email, or the user account
    gcloud wrote into the ADC file (``account``); None where they do not say."""
    for attribute in ("service_account_email", "account"):
        value = getattr(credentials, attribute, None)
        if isinstance(value, str) and "@" in value:
            return value
    return None
