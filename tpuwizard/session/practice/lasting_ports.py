"""A lasting practice sandbox takes over the port of a sandbox that is ending, where another
command's lasting sandbox already serves the same home.

A command's own sandbox (the wizard's, a launch's) hands what it holds over at its end
(``sandbox.hand_over``): the watchdogs it armed call its port with its token, as a VM's call
Google's one address. Where a lasting sandbox was started meanwhile (``tpuwizard up`` in another
terminal), a second one cannot serve the same home, so the running one serves the ending one's
port and token as well; without that, the handed-over node's watchdog called a port nobody
served and never deleted it. The request is a file beside server.json (readable by this user
only: it holds the token), taken up by the sandbox's own loop (practice/lasting.py)."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

PORT_REQUEST = "port-request.json"


def ask_to_serve(folder: Path, port: int, token: str, wait_s: float = 30.0) -> bool:
    """Ask the lasting sandbox serving ``folder`` to serve ``port`` with ``token`` too; True
    once the request is taken and the port answers (False: it did not in time)."""
    request = folder / PORT_REQUEST
    tmp = request.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"port": port, "token": token}, f)
    os.replace(tmp, request)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not request.exists() and _answers(port):
            return True
        time.sleep(0.05)
    return False


def take_port_request(folder: Path) -> tuple[int, str] | None:
    """The port and token a handing-over command asked this sandbox to serve, if any (the
    request is used up; one that is not a port and a token is dropped)."""
    from tpuwizard.core import untrusted
    from tpuwizard.session.practice.lasting_info import MAX_SERVER_INFO_BYTES

    request = folder / PORT_REQUEST
    try:  # untrusted input: a FIFO in its place must not hang the sandbox's watch
        data = untrusted.read_json(request, MAX_SERVER_INFO_BYTES, max_depth=2)
    except (OSError, ValueError):
        return None
    request.unlink(missing_ok=True)
    port, token = (data.get("port"), data.get("token")) if isinstance(data, dict) else (0, 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        return None
    if not isinstance(token, str) or not token:
        return None
    return port, token


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False
