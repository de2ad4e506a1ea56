"""Kaggle credentials, found where kaggle 2.2.5 looks for them, from files and the environment
only: no network call (kaggle's own ``authenticate`` asks the server about a token).

The order is the client's: ``KAGGLE_API_TOKEN`` (a token, or the path of a file holding one),
``~/.kaggle/access_token`` (or ``access_token.txt``); then a legacy key: ``kaggle.json`` in
``KAGGLE_CONFIG_DIR``, else ``~/.kaggle`` when that folder exists, else
``$XDG_CONFIG_HOME/kaggle`` (``~/.config/kaggle``), with ``KAGGLE_USERNAME``/``KAGGLE_KEY``
from the environment taking precedence over the file's fields.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


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


def _token_file(path: Path) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
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
    token = env.get("KAGGLE_API_TOKEN")
    if token:
        if Path(token).exists():
            if _token_file(Path(token)):
                return KaggleCredentials("token", f"the file named by KAGGLE_API_TOKEN ({token})")
        else:
            return KaggleCredentials("token", "KAGGLE_API_TOKEN")
    for name in ("access_token", "access_token.txt"):
        path = home / ".kaggle" / name
        if _token_file(path):
            return KaggleCredentials("token", str(path))
    config = legacy_config_dir(env, home) / "kaggle.json"
    fields: dict[str, str] = {}
    try:
        loaded = json.loads(config.read_text())
        if isinstance(loaded, dict):
            fields = {k: v for k, v in loaded.items() if isinstance(v, str)}
    except (OSError, ValueError):
        pass
    username = env.get("KAGGLE_USERNAME") or fields.get("username")
    key = env.get("KAGGLE_KEY") or fields.get("key")
    if username and key:
        from_env = env.get("KAGGLE_USERNAME") and env.get("KAGGLE_KEY")
        source = "KAGGLE_USERNAME and KAGGLE_KEY" if from_env else str(config)
        return KaggleCredentials("legacy key", source, username)
    return NoCredentials(
        (
            "KAGGLE_API_TOKEN",
            str(home / ".kaggle" / "access_token"),
            str(config),
            "KAGGLE_USERNAME and KAGGLE_KEY",
        )
    )
