"""Sending changed files with rsync, where both ends have it and the transport allows it.

rsync goes over the very SSH the transport uses (the same ssh, key, options, known_hosts file and
``HostKeyAlias``, given as ``-e``), or copies on this machine for the sandbox's local shell. The
gcloud transport has no way in for rsync (``gcloud compute tpus tpu-vm scp`` is not rsync), so
there :mod:`tpuwizard.core.remote.sync` sends a tar. The files to send are named by the caller
(``--files-from``) and always sent (``--ignore-times``: the caller's hashes decide what changed,
not rsync's size-and-time check); rsync's delta transfer keeps a small edit to a big file small.
"""

from __future__ import annotations

import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.errors import RemoteError
from tpuwizard.core.remote.transports import (
    LocalTransport,
    SshTransport,
    Transport,
    run_cancellable,
)

# Printed on the worker between the manifest and where rsync is (one round trip for both).
MARKER = "--tpuwizard-rsync--"


@dataclass(frozen=True)
class Route:
    """How rsync reaches one worker's folder: its options and the destination."""

    options: list[str]
    destination: str  # ends in '/'


@dataclass
class Sent:
    bytes_sent: int
    itemized: list[str] = field(default_factory=list)  # rsync's --itemize-changes lines


def route(transport: Transport, worker: int, folder: str, worker_rsync: str) -> Route | str:
    """The rsync route to ``folder`` (relative to the worker's home) on ``worker``, or why not.

    ``worker_rsync`` is what ``command -v rsync`` printed on the worker ('' when it has none).
    """
    if shutil.which("rsync") is None:
        return "no rsync on this computer"
    if not worker_rsync.startswith("/"):
        return "no rsync on the worker"
    if isinstance(transport, LocalTransport):
        return Route([], f"{transport.homes[worker] / folder}/")
    if isinstance(transport, SshTransport):
        home = transport.homes[worker]
        path = f"{home}/{folder}" if home else folder  # one account serves every sandbox worker
        host = transport.hosts[worker]
        address = f"[{host}]" if ":" in host else host
        return Route(
            ["-e", shlex.join(transport.ssh_words(worker)), f"--rsync-path={worker_rsync}"],
            f"{transport.user}@{address}:{path}/",
        )
    return f"{type(transport).__name__.removesuffix('Transport').lower()} cannot carry rsync"


def send(
    transport: Transport, worker: int, way: Route, root: Path, files: list[str], timeout: float
) -> Sent:
    """Send ``files`` (relative to ``root``) to the route's folder; raise RemoteError on failure."""
    argv = [
        "rsync",
        "--times",
        "--perms",
        "--copy-links",  # the one link among the files (the script): its target's content
        "--ignore-times",
        "--itemize-changes",
        "--stats",
        "--from0",
        "--files-from=-",
        *way.options,
        f"{root}/",
        way.destination,
    ]
    listing = b"".join(name.encode() + b"\0" for name in files)
    code, out, err = run_cancellable(
        argv, listing, timeout, transport.cancel, f"worker {worker}: rsync"
    )
    text = out.decode(errors="replace")
    if code != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        why = lines[-1] if lines else "no message"
        raise RemoteError(f"worker {worker}: rsync exited {code}: {why}")
    itemized = [line for line in text.splitlines() if re.match(r"^[<>ch.*][fdLDS]", line)]
    found = re.search(r"Total bytes sent: ([\d,.]+)", text)
    sent = int(re.sub(r"[,.]", "", found.group(1))) if found else 0
    return Sent(sent, itemized)
