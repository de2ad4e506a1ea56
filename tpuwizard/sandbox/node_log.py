"""Each practice resource's own log, kept in the sandbox's state folder after it is gone.

What its watchdog asked of the API and what it got (the server's side: refused, answered, which
server answered), and, when its VMs end, the watchdog's own reports from worker 0 (as a VM's
serial console outlives it in Cloud Logging). A kept node whose watchdog did not delete it says
here whether the watchdog was refused, never armed, killed, gave up, or was late, and a deleted
one how far its delete came after its deadline. One JSON object a line; bounded in size.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LOGS_FOLDER = "node-logs"
MAX_LOG_BYTES = 256 * 1024  # a watchdog's whole life is a few dozen lines; a flood stops here
MAX_CONSOLE_BYTES = 64 * 1024  # of each watchdog's own log, its last part
# The parts of a resource name that may become a path: Google's ids are lower-case letters,
# digits and hyphens, so nothing a request names can climb out of the logs folder.
_PART = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_KINDS = ("nodes", "queuedResources")
WATCHDOG_JOBS = "w0/.tpuwizard/jobs/watchdog-*/log"
WATCHDOG_AGENT = "tpu_watchdog/"  # verify/tpu_watchdog.py's User-Agent
_RESOURCE_PATH = re.compile(
    r"/v2(?:alpha1)?/(projects/[^/]+/locations/[^/]+/(?:nodes|queuedResources)/[^/:]+)"
)


def log_path(home: Path, resource: str) -> Path | None:
    """Where ``resource`` (``projects/P/locations/Z/nodes/N`` or ``.../queuedResources/Q``)
    keeps its log under the sandbox ``home``; None for a name that is not one."""
    parts = resource.split("/")
    if len(parts) != 6 or parts[0] != "projects" or parts[2] != "locations":
        return None
    project, zone, kind, name = parts[1], parts[3], parts[4], parts[5]
    if kind not in _KINDS or not all(_PART.fullmatch(p) for p in (project, zone, name)):
        return None
    return home / LOGS_FOLDER / project / zone / kind / f"{name}.log"


def note(home: Path, resource: str, event: str, **fields: Any) -> None:
    """Append one line to ``resource``'s log: when, what, and ``fields``. Never raises for the
    disk: a log that cannot be written must not fail the API call it describes."""
    path = log_path(home, resource)
    if path is None:
        return
    line = json.dumps({"at": round(time.time(), 2), "event": event, **fields}, sort_keys=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size >= MAX_LOG_BYTES:
            return
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as log:
            log.write(line + "\n")
    except OSError:
        return


def keep_consoles(home: Path, resource: str, node_folder: Path, why: str) -> None:
    """The VMs of ``resource`` end (``why``): keep what its watchdog said (the last
    :data:`MAX_CONSOLE_BYTES` of each watchdog job's log on worker 0) in its log."""
    for job_log in sorted(node_folder.glob(WATCHDOG_JOBS)):
        try:  # written on the VM, where the user's script runs too: read bounded, no FIFO
            if not job_log.is_file():
                continue
            start = max(0, job_log.stat().st_size - MAX_CONSOLE_BYTES)
            with job_log.open("rb") as f:
                f.seek(start)
                lines = f.read(MAX_CONSOLE_BYTES).decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        lines = lines[1:] if start else lines  # the first one read is cut: the rest are whole
        note(home, resource, "watchdog_console", job=job_log.parent.name, lines=lines)
    note(home, resource, "vms_ended", why=why)


class WatchdogCalls:
    """The calls watchdogs made to one server, noted in each resource's log: every delete, and a
    read when its answer differs from the last one noted (a look every half second would flood
    it). Only for resources the server holds, so a request cannot make files for any name."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._last: dict[str, tuple[str, int]] = {}

    def answered(
        self,
        agent: str,
        method: str,
        path: str,
        status: int,
        served_by: str,
        holds: Callable[[str], bool],
    ) -> None:
        """A request (``agent``, ``method``, ``path``) was answered ``status`` by the server
        ``served_by``; ``holds`` says whether the server holds a resource of that name."""
        match = _RESOURCE_PATH.fullmatch(path)
        if not agent.startswith(WATCHDOG_AGENT) or match is None:
            return
        resource = match.group(1)
        with self._lock:
            if method == "GET" and self._last.get(resource) == (method, status):
                return
            self._last[resource] = (method, status)
        if holds(resource):
            note(self.home, resource, "watchdog_call", method=method, status=status, by=served_by)


def read_log(home: Path, resource: str) -> list[dict[str, Any]]:
    """The lines of ``resource``'s log (what a test prints when a watchdog failed it)."""
    path = log_path(home, resource)
    if path is None or not path.is_file():
        return []
    said = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            said.append(json.loads(line))
        except ValueError:
            continue
    return said
