"""How tpuwizard's SSH logs in to a launch's VMs, chosen once, here: for ``launch`` and ``up``
before the create (the preflight says whether OS Login is on), and for ``run``, ``watch`` and
``ssh`` on a kept node from what ``up`` recorded in the ledger, so every command agrees.

Under OS Login the VM ignores the ``ssh-keys`` metadata (google-behaviour.md:60): tpuwizard's key
must be in the caller's OS Login profile, and SSH logs in as the POSIX user Google names. A kept
node's command imports the key again where it expired or was removed, expiring at the node's
deadline. The key is one per install, so it is deleted only once nothing recorded in the ledger
still logs in with it: after the verified teardown of the last such resource.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tpuwizard.core.cloud.backends import Transport
from tpuwizard.core.cloud.endpoint import GOOGLE_ENDPOINTS
from tpuwizard.core.cloud.oslogin import (
    GCLOUD,
    METADATA,
    OS_LOGIN,
    OSLOGIN_ENDPOINT,
    LoginChoice,
    LoginKey,
    OsLoginError,
    OsLoginKeys,
    account_email,
)
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.record import KeptRecord
from tpuwizard.core.launch.records.ledger import Entry, Ledger, Resource
from tpuwizard.core.launch.teardown.verified import TeardownResult

PRACTICE_ACCOUNT = "you@practice.invalid"  # whose OS Login profile a practice launch uses


@dataclass(frozen=True)
class OsLoginAsk:
    """OS Login is on and tpuwizard's own SSH is used: the key must be in the profile until
    ``until`` (epoch seconds; None: a kept node no deadline ends)."""

    until: float | None


def keys_for(cloud: Any) -> OsLoginKeys:
    """OS Login's API for ``cloud``'s credentials: Google's, or the sandbox's beside the rest."""
    endpoint = cloud.endpoint.rstrip("/")
    on_google = endpoint in (e.rstrip("/") for e in GOOGLE_ENDPOINTS)
    return OsLoginKeys(
        cloud.credentials, cloud.project, OSLOGIN_ENDPOINT if on_google else endpoint
    )


def account_for(cloud: Any, is_practice: bool) -> str:
    """Whose profile: the account the credentials act for, else gcloud's (in practice the
    sandbox's token names none, and the sandbox takes any)."""
    from tpuwizard.core.cloud import gcloud_config

    email = account_email(cloud.credentials)
    if email is None:
        email = PRACTICE_ACCOUNT if is_practice else gcloud_config.discover().account
    if not email:
        raise OsLoginError(
            "OS Login is on, and neither your credentials nor gcloud name your account, so "
            "tpuwizard cannot import its key into your OS Login profile. Fix: `gcloud auth "
            "login`, or use --transport gcloud."
        )
    return email


def choose_login(
    cloud: Any,
    is_practice: bool,
    transport: str,
    public_key: str,
    metadata_user: str,
    os_login: OsLoginAsk | None,
    account: str | None = None,
) -> tuple[LoginChoice, tuple[LoginKey, OsLoginKeys] | None]:
    """The one choice of user and key: gcloud's SSH; or, under OS Login, the key in
    ``account``'s profile (the caller's by default), imported where it is not there until
    ``os_login.until``, as the POSIX user Google names; else ``metadata_user`` with the key in
    the VM's metadata. Returns the choice and, under OS Login, the key and its API."""
    if transport == Transport.GCLOUD:
        return LoginChoice(GCLOUD), None
    if os_login is None or not public_key:
        return LoginChoice(METADATA, metadata_user), None
    keys = keys_for(cloud)
    key = keys.ensure_key(account or account_for(cloud, is_practice), public_key, os_login.until)
    return LoginChoice(OS_LOGIN, key.username, key.user, key.fingerprint), (key, keys)


def login_of(entry: Entry | None) -> LoginChoice:
    """How a resource's create chose to log in, as its intent recorded it (``login``; a record
    from before there was one, or none: the metadata way)."""
    return LoginChoice.from_record(entry.extra.get("login") if entry else None)


def recorded_login(entry: Entry) -> tuple[LoginChoice, OsLoginAsk | None]:
    """How ``up`` chose to log in to a kept node (the ledger's ``login``; a record from before
    there was one: the metadata way), and under OS Login until when (the node's deadline)."""
    choice = login_of(entry)
    if choice.way != OS_LOGIN:
        return choice, None
    return choice, OsLoginAsk(KeptRecord.of(entry).deadline)


def still_logging_in(ledger: Ledger, fingerprint: str, but: Resource | None = None) -> str | None:
    """The name of a resource that may still exist and logs in with the key ``fingerprint``
    (other than ``but``), else None."""
    for entry in ledger.open_entries():
        if but is not None and entry.resource.key == but.key:
            continue
        choice = login_of(entry)
        if choice.way == OS_LOGIN and choice.fingerprint == fingerprint:
            return entry.resource.node_id or entry.resource.name
    return None


def forget_unless_used(ledger: Ledger, key: LoginKey, keys: OsLoginKeys) -> str | None:
    """Delete ``key`` from the profile unless another resource still logs in with it; returns
    that resource's name where one does (the key then stays), else None (deleted)."""
    user = still_logging_in(ledger, key.fingerprint)
    if user is None:
        keys.delete_key(key)
    return user


def forget_after_teardown(
    cloud_for: Any, ledger: Ledger, results: list[TeardownResult]
) -> list[TeardownResult]:
    """After ``down`` or ``teardown``: for each resource verified gone that logged in through
    OS Login, delete its key from the profile unless something else still logs in with it;
    each result then says what became of the key (``login_key``)."""
    recorded = {e.resource.key: e for e in ledger.entries()}
    out = []
    for result in results:
        entry = recorded.get(result.resource.key)
        choice = login_of(entry)
        if not result.verified or choice.way != OS_LOGIN or not choice.fingerprint:
            out.append(result)
            continue
        fingerprint = choice.fingerprint
        key = LoginKey(choice.account or "", choice.username or "", fingerprint, None)
        try:
            kept_for = forget_unless_used(ledger, key, keys_for(cloud_for(result.resource.backend)))
            said = ev.LoginKeyForgotten(fingerprint, still_used_by=kept_for)
        except Exception as err:  # said; the verified teardown stands
            said = ev.LoginKeyForgotten(fingerprint, str(err))
        out.append(dataclasses.replace(result, login_key=said))
    return out
