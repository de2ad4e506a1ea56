"""A run folder's own records (``cost.json``, ``outcome.json``): written whole or not at all, and
read back as untrusted input, so that a later command (``down`` ending a kept node) can bring them
up to date without a reader ever seeing half a file."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted

COST_FILE = "cost.json"
RECORD_MAX_BYTES = 64 * untrusted.KIB  # tpuwizard writes well under 2 KiB


def write_record(path: Path, record: dict[str, Any]) -> bool:
    """Write ``record`` as ``path`` through a temporary file renamed over it (a crash or a full
    disk leaves the earlier file, never a torn one). False where the disk refused: the caller's
    events and summary say the same, so a record that cannot be written costs only itself."""
    part = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.part")
    try:
        part.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(part, path)  # replaces the name: a link in its place is not followed
    except OSError:
        with contextlib.suppress(OSError):
            part.unlink()
        return False
    return True


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at ``path``, or None where there is none, it cannot be read, or it is no
    JSON object (edited by hand: left as it is)."""
    try:
        data = untrusted.read_json(path, RECORD_MAX_BYTES)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
