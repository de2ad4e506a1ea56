"""OS Login in the sandbox: the users' login profiles, and which keys a VM accepts.

gb:60-61: "when enable-oslogin is TRUE in project or node metadata, metadata ssh-keys are
ignored". A VM is under OS Login when the org policy compute.requireOsLogin is enforced (fault
``oslogin=policy``), else when its own metadata says ``enable-oslogin`` (TRUE or FALSE), else when
the project's does (fault ``oslogin=1``). Such a VM accepts the keys imported into an OS Login
profile (``users.importSshPublicKey``) that have not expired, and the caller's only if it holds
``compute.instances.osLogin`` (fault ``oslogin_denied``). The paired sshd stands for every VM, so
its authorized_keys is the union of what each existing VM accepts.

Profiles live in the state file, ``data["oslogin"][USER][FINGERPRINT] = {key, expirationTimeUsec}``.
The POSIX account is the current OS user's: the test sshd runs as the current user, so that is
the name a client must connect as (on Google it is derived from the account's email).
"""

from __future__ import annotations

import base64
import binascii
import getpass
import hashlib
import os
import time
from pathlib import Path
from typing import Any

from tpuwizard.sandbox.faults import Faults
from tpuwizard.sandbox.model import ApiError

TRUE_WORDS = ("true", "1", "yes", "y", "on")


def fingerprint(key: str) -> str:
    """The SHA-256 of the key's blob, in hex (as OS Login lists fingerprints)."""
    parts = key.split()
    if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-", "sk-")):
        raise ApiError(400, "INVALID_ARGUMENT", "Invalid SSH public key: expected 'TYPE BASE64'.")
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise ApiError(400, "INVALID_ARGUMENT", "Invalid SSH public key encoding.") from None
    return hashlib.sha256(blob).hexdigest()


def posix_account(user: str, project: str | None) -> dict[str, Any]:
    name = getpass.getuser()
    account: dict[str, Any] = {
        "primary": True,
        "username": name,
        "uid": str(os.getuid()),
        "gid": str(os.getgid()),
        "homeDirectory": str(Path.home()),
        "shell": "/bin/bash",
        "gecos": name,
        "operatingSystemType": "LINUX",
    }
    if project:
        account.update(accountId=project, name=f"users/{user}/projects/{project}")
    return account


def login_profile(data: dict[str, Any], user: str, project: str | None) -> dict[str, Any]:
    keys = data.get("oslogin", {}).get(user, {})
    profile: dict[str, Any] = {"name": user, "posixAccounts": [posix_account(user, project)]}
    if keys:
        profile["sshPublicKeys"] = {
            fp: dict(entry, fingerprint=fp, name=f"users/{user}/sshPublicKeys/{fp}")
            for fp, entry in sorted(keys.items())
        }
    return profile


def import_key(data: dict[str, Any], user: str, body: dict[str, Any]) -> str:
    key = str(body.get("key") or "").strip()
    if not key:
        raise ApiError(400, "INVALID_ARGUMENT", "Request contains an invalid argument: key.")
    fp = fingerprint(key)
    entry: dict[str, Any] = {"key": key}
    if body.get("expirationTimeUsec") not in (None, ""):
        expires = str(body["expirationTimeUsec"])
        if not expires.isdigit():
            raise ApiError(400, "INVALID_ARGUMENT", "expirationTimeUsec must be an int64.")
        entry["expirationTimeUsec"] = expires
    data.setdefault("oslogin", {}).setdefault(user, {})[fp] = entry
    return fp


def delete_key(data: dict[str, Any], user: str, fp: str) -> None:
    keys = data.get("oslogin", {}).get(user, {})
    if fp not in keys:
        raise ApiError(404, "NOT_FOUND", f"Public key 'users/{user}/sshPublicKeys/{fp}' not found.")
    del keys[fp]


def metadata_value(metadata: Any, key: str) -> str | None:
    """A metadata value: a TPU node's is a map, a Compute Engine instance's has items."""
    if not isinstance(metadata, dict):
        return None
    if "items" in metadata:
        found = [i.get("value") for i in metadata.get("items") or [] if i.get("key") == key]
        return str(found[-1]) if found else None
    value = metadata.get(key)
    return None if value is None else str(value)


def under_oslogin(faults: Faults, metadata: Any) -> bool:
    if faults.oslogin_policy:
        return True
    own = metadata_value(metadata, "enable-oslogin")
    if own is not None:
        return own.strip().lower() in TRUE_WORDS
    return faults.oslogin


def imported_keys(data: dict[str, Any], now: float | None = None) -> list[str]:
    """Every imported key that has not expired."""
    now_usec = (time.time() if now is None else now) * 1_000_000
    out = []
    for keys in data.get("oslogin", {}).values():
        for entry in keys.values():
            expires = entry.get("expirationTimeUsec")
            if expires is None or int(expires) > now_usec:
                out.append(str(entry["key"]))
    return out


def metadata_keys(metadata: Any) -> list[str]:
    """The public keys of ``ssh-keys`` metadata ("user:key" lines)."""
    text = metadata_value(metadata, "ssh-keys") or ""
    keys = []
    for entry in text.splitlines():
        _user, _, key = entry.partition(":")
        if key.strip():
            keys.append(key.strip())
    return keys


def accepted_keys(faults: Faults, data: dict[str, Any]) -> list[str]:
    """What the paired sshd accepts: each existing VM's keys, by its OS Login setting."""
    metadatas = [n.get("metadata", {}) for n in data["nodes"].values()]
    metadatas += [i.get("metadata", {}) for i in data.get("instances", {}).values()]
    lines: list[str] = []
    oslogin_vm = False
    for metadata in metadatas:
        if under_oslogin(faults, metadata):
            oslogin_vm = True
        else:
            lines += metadata_keys(metadata)
    if oslogin_vm and not faults.oslogin_denied:
        lines += imported_keys(data)
    return list(dict.fromkeys(lines))
