"""OS Login keys: with OS Login on, a VM ignores the ``ssh-keys`` in its metadata
(google-behaviour.md:60) and accepts the keys in the caller's OS Login profile. So tpuwizard
imports its public key there (``users.importSshPublicKey``, expiring at the launch's deadline),
connects as the POSIX user the answer names, and deletes the key once the node is verified gone.
How a launch logs in is a :class:`LoginChoice`, recorded in the ledger so that ``run``, ``watch``
and ``ssh`` on a node ``up`` kept log in the same way.

Calls are made with google-auth's ``AuthorizedSession``, as :mod:`tpuwizard.core.cloud.iam` does;
in practice the sandbox serves the same paths.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote

OSLOGIN_ENDPOINT = "https://oslogin.googleapis.com"
# How SSH logs in: tpuwizard's key in the VM's ssh-keys metadata; the key imported into the OS
# Login profile (the VM ignores that metadata); or gcloud's own SSH (which handles OS Login).
METADATA, OS_LOGIN, GCLOUD = "metadata", "os-login", "gcloud"


class OsLoginError(RuntimeError):
    """An OS Login call was refused or unanswered; the message says which and what to do."""


@dataclass(frozen=True)
class LoginKey:
    """A key imported into ``user``'s profile: log in as ``username`` until ``expires_at``."""

    user: str  # the account's email: users/USER
    username: str  # the POSIX user the VM knows the account as
    fingerprint: str
    expires_at: float | None  # seconds since the epoch; None: it does not expire


@dataclass(frozen=True)
class LoginChoice:
    """How tpuwizard's SSH logs in to a launch's VMs, chosen before the create: ``way`` is
    METADATA, OS_LOGIN (as ``username``, with the key ``fingerprint`` in ``account``'s profile) or
    GCLOUD. The ledger records it (:meth:`record`) with the resource."""

    way: str
    username: str | None = None
    account: str | None = None
    fingerprint: str | None = None

    @property
    def transport(self) -> str:
        return "gcloud" if self.way == GCLOUD else "ssh"

    def record(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_record(cls, data: Any) -> LoginChoice:
        """What the ledger recorded; a record made before there was one: the metadata way."""
        if not isinstance(data, dict) or data.get("way") not in (METADATA, OS_LOGIN, GCLOUD):
            return cls(METADATA)
        fields = ("username", "account", "fingerprint")
        named = [data.get(k) if isinstance(data.get(k), str) else None for k in fields]
        return cls(str(data["way"]), *named)


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
    held = held_key(profile, public_key)
    if held is None:
        raise OsLoginError("OS Login answered the import without the key tpuwizard imported.")
    return held[0]


def held_key(profile: dict[str, Any], public_key: str) -> tuple[str, float | None] | None:
    """(fingerprint, expiry in epoch seconds or None) of ``public_key`` in ``profile``; None
    where the profile does not hold it."""
    ours = public_key.split()[:2]
    for fingerprint, entry in (profile.get("sshPublicKeys") or {}).items():
        if isinstance(entry, dict) and str(entry.get("key", "")).split()[:2] == ours:
            expires = str(entry.get("expirationTimeUsec") or "")
            until = int(expires) / 1_000_000 if expires.isdigit() else None
            return str(entry.get("fingerprint") or fingerprint), until
    return None


def lasts(held_until: float | None, wanted: float | None, now: float | None = None) -> bool:
    """A key held until ``held_until`` serves a login wanted until ``wanted`` (None: for ever)."""
    if held_until is None:
        return True
    if held_until <= (time.time() if now is None else now):
        return False  # expired: Google's VMs refuse it
    return wanted is not None and held_until >= wanted


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

    def ensure_key(self, user: str, public_key: str, expires_at: float | None) -> LoginKey:
        """``public_key`` in ``user``'s profile until ``expires_at`` at least (None: without
        expiry): the one there where it lasts that long, else imported (again, where it expired
        or was removed, or with the later expiry)."""
        url = f"{self.endpoint}/v1/users/{quote(user, safe='@')}/loginProfile"
        profile = self._call("GET", url, "read", user)
        held = held_key(profile, public_key)
        if held is not None and lasts(held[1], expires_at):
            return LoginKey(user, posix_username(profile), held[0], held[1])
        return self.import_key(user, public_key, expires_at)

    def import_key(self, user: str, public_key: str, expires_at: float | None) -> LoginKey:
        url = f"{self.endpoint}/v1/users/{quote(user, safe='@')}:importSshPublicKey"
        body = {"key": public_key}
        if expires_at is not None:
            body["expirationTimeUsec"] = str(int(expires_at * 1_000_000))
        answer = self._call("POST", url, "import tpuwizard's SSH key into", user, json=body)
        profile = answer.get("loginProfile") or {}
        return LoginKey(
            user, posix_username(profile), fingerprint_of(profile, public_key), expires_at
        )

    def delete_key(self, key: LoginKey) -> None:
        url = (
            f"{self.endpoint}/v1/users/{quote(key.user, safe='@')}/sshPublicKeys/{key.fingerprint}"
        )
        # Already gone (removed by hand, or expired and dropped): what the delete was for.
        self._call("DELETE", url, "delete tpuwizard's SSH key from", key.user, missing_ok=True)

    def _call(
        self, method: str, url: str, what: str, user: str, missing_ok: bool = False, **kwargs: Any
    ) -> dict[str, Any]:
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
        if missing_ok and response.status_code == 404:
            return {}
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
