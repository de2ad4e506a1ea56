"""Kaggle credentials, found where kaggle 2.2.5 looks for them, from files and the environment
only: no network call (kaggle's own ``authenticate`` asks the server about a token).

The order is the client's: ``KAGGLE_API_TOKEN`` (a token, or the path of a file holding one),
``~/.kaggle/access_token`` (or ``access_token.txt``); then a legacy key: ``kaggle.json`` in
``KAGGLE_CONFIG_DIR``, else ``~/.kaggle`` when that folder exists, else
``$XDG_CONFIG_HOME/kaggle`` (``~/.config/kaggle``), with ``KAGGLE_USERNAME``/``KAGGLE_KEY``
from the environment taking precedence over the file's fields.

Each file is read as untrusted input (core/untrusted.py): a regular file of a few KiB, never a
FIFO (which would hang this and Kaggle's own client) nor a device such as ``/dev/zero``. One that
is not is named among the places looked at, with why, and no credentials are found: Kaggle's
own client would read it as it is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core import untrusted

# A token is a few hundred bytes, kaggle.json two short fields: a file past this is no credential.
MAX_CREDENTIAL_BYTES = 64 * untrusted.KIB


@dataclass(frozen=True)
class KaggleCredentials:
    """Where the credentials were found (``source``), and the username where they name one (an
    access token names none until the server is asked)."""

    kind: str  # "token" or "legacy key"
    source: str
    username: str | None = None


@dataclass(frozen=True)
class NoCredentials:
    """Nothing found: the places looked at, for the message."""

    looked_at: tuple[str, ...]


def _token_file(path: Path, refused: list[str]) -> str | None:
    """The token in ``path``; None where there is none (a file that is no small regular file,
    or not text, is added to ``refused`` with why)."""
    try:
        text = untrusted.read_text(path, MAX_CREDENTIAL_BYTES).strip()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        refused.append(f"{path} (refused: {untrusted.describe(err)}; move it aside)")
        return None
    return text or None


def legacy_config_dir(env: Mapping[str, str], home: Path) -> Path:
    """The folder kaggle.json is read from, as kaggle 2.2.5 chooses it."""
    if env.get("KAGGLE_CONFIG_DIR"):
        return Path(env["KAGGLE_CONFIG_DIR"])
    dot_kaggle = home / ".kaggle"
    if dot_kaggle.exists():
        return dot_kaggle
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "kaggle"


def find_credentials(
    env: Mapping[str, str] | None = None, home: Path | None = None
) -> KaggleCredentials | NoCredentials:
    """The credentials kaggle 2.2.5 would use, or the places where none was found."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    refused: list[str] = []
    config = legacy_config_dir(env, home) / "kaggle.json"
    token = env.get("KAGGLE_API_TOKEN")
    if token:
        if os.path.exists(token):  # as the client tells a path from a token (False for a long one)
            if _token_file(Path(token), refused):
                return KaggleCredentials("token", f"the file named by KAGGLE_API_TOKEN ({token})")
        else:
            return KaggleCredentials("token", "KAGGLE_API_TOKEN")
    for name in ("access_token", "access_token.txt"):
        path = home / ".kaggle" / name
        if not refused and _token_file(path, refused):
            return KaggleCredentials("token", str(path))
    if refused:  # Kaggle's own client reads the files in this order: it would meet it first
        return _none_found(home, config, refused)
    fields: dict[str, str] = {}
    try:
        loaded = untrusted.read_json(config, MAX_CREDENTIAL_BYTES, max_depth=4)
        if isinstance(loaded, dict):
            fields = {k: v for k, v in loaded.items() if isinstance(v, str)}
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as err:
        refused.append(f"{config} (refused: {untrusted.describe(err)}; move it aside)")
    username = env.get("KAGGLE_USERNAME") or fields.get("username")
    key = env.get("KAGGLE_KEY") or fields.get("key")
    if username and key and not refused:  # Kaggle's own client would read a refused file too
        from_env = env.get("KAGGLE_USERNAME") and env.get("KAGGLE_KEY")
        source = "KAGGLE_USERNAME and KAGGLE_KEY" if from_env else str(config)
        return KaggleCredentials("legacy key", source, username)
    return _none_found(home, config, refused)


def _none_found(home: Path, config: Path, refused: list[str]) -> NoCredentials:
    """The places looked at, and each file refused there with why."""
    return NoCredentials(
        (
            "KAGGLE_API_TOKEN",
            str(home / ".kaggle" / "access_token"),
            str(config),
            "KAGGLE_USERNAME and KAGGLE_KEY",
            *refused,
        )
    )
