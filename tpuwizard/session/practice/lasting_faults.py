"""A lasting practice sandbox's faults are each command's own: a command that attaches asks
for its faults (none, when it sets none) and the sandbox serves those from then on; only a
command asking for other faults than the ones another command set is refused
(practice._refuse_faults_it_does_not_serve). The request is a file beside server.json, taken
up by the sandbox's own loop (practice/lasting.py), which writes the faults it serves back into
server.json: the command waits for that before its first call."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

FAULTS_REQUEST = "faults-request.json"


def ask_for_faults(folder: Path, info: Path, asked: str, wait_s: float = 10.0) -> bool:
    """Ask the lasting sandbox serving ``folder`` to serve ``asked``; True once server.json
    says it does (False: it did not answer in time; it may have ended)."""
    from tpuwizard.session.practice.lasting_info import read_server_info

    request = folder / FAULTS_REQUEST
    tmp = request.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"faults": asked}))
    os.replace(tmp, request)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            serving = read_server_info(info)["faults"]
        except (OSError, ValueError, KeyError, TypeError):
            return False
        if serving.strip() == asked.strip() and not request.exists():
            return True
        time.sleep(0.05)
    return False


def take_request(folder: Path) -> str | None:
    """The faults a command asked for since the last look (the request is used up), if any."""
    request = folder / FAULTS_REQUEST
    from tpuwizard.core import untrusted
    from tpuwizard.session.practice.lasting_info import MAX_SERVER_INFO_BYTES

    try:  # untrusted input: a FIFO in its place must not hang the sandbox's watch
        data = untrusted.read_json(request, MAX_SERVER_INFO_BYTES, max_depth=2)
        asked = str(data.get("faults") or "")
    except (OSError, ValueError, AttributeError):
        return None
    request.unlink(missing_ok=True)
    return asked
