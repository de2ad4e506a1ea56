"""The lasting practice sandbox's ``server.json`` (where it serves, its pid, its token, its
faults), read back by every command that attaches to it, by ``down --sandbox`` and by the
sandbox's own loop: as untrusted input (core/untrusted.py), so a FIFO or ``/dev/zero`` in its
place, an address off this computer or a pid of 1 or below is no server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted

# A few short fields: where it serves, its pid, its token, its faults.
MAX_SERVER_INFO_BYTES = 64 * untrusted.KIB
# Only this computer serves the practice sandbox: an address elsewhere is none it wrote.
_LOOPBACK = re.compile(r"http://127\.0\.0\.1:\d{1,5}")


def read_server_info(info: Path) -> dict[str, Any]:
    """``server.json`` at ``info``: a small regular file whose endpoint is a port on 127.0.0.1,
    whose pid is a process's (above 1) and whose token is text. ValueError (or OSError) when it
    is not."""
    data = untrusted.read_json(info, MAX_SERVER_INFO_BYTES, max_depth=2)
    if not isinstance(data, dict):
        raise ValueError(f"{info} is not the practice sandbox's server.json")
    endpoint, pid, token = data["endpoint"], data["pid"], data["token"]
    if not isinstance(endpoint, str) or not _LOOPBACK.fullmatch(endpoint):
        raise ValueError(f"{info} names no address of this computer's")
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1:
        raise ValueError(f"{info} names no process")
    if not isinstance(token, str):
        raise ValueError(f"{info} holds no token")
    return {**data, "faults": str(data.get("faults") or "")}
