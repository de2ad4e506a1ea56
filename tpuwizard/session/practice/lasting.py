"""A practice sandbox that outlives the command which started it, for a kept node.

A kept node's watchdog (a local process in the sandbox) must reach the API after ``tpuwizard up``
has exited, and ``run``, ``status`` and ``down`` must see one consistent cloud, as they would see
Google. So ``up`` in practice starts this server detached; it writes its endpoint and pid to
``$TPUWIZARD_HOME/sandbox/server.json``, later commands attach to it, and it exits by itself once
it has held no node and no queued resource for a while (or its state folder is gone).

    python -m tpuwizard.session.practice.lasting
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tpuwizard.session.practice import sandbox as practice
from tpuwizard.session.practice.lasting_faults import take_request
from tpuwizard.session.practice.lasting_ports import take_port_request


def main() -> int:
    from tpuwizard.sandbox.fault_switch import switch_faults
    from tpuwizard.sandbox.serving import start_in_thread

    # Seconds to stay up holding nothing (checked by the command that starts this one, too).
    linger = practice.sandbox_linger()
    # Taking over from an ending process (practice.hand_over): its port and token.
    port = int(os.environ.pop(practice.LASTING_PORT_ENV, "0") or 0)
    token = os.environ.pop(practice.LASTING_TOKEN_ENV, None)
    server = practice.make_sandbox_server(port=port, token=token)
    folder = server.state.home
    start_in_thread(server)
    _said(f"serving {server.endpoint}" + (" (taken over from a command ending)" if port else ""))
    info = folder / practice.LASTING_SERVER_FILE
    # Its faults too: a later command asking for others is told they do not apply.
    _write_info(info, server, os.environ.get(practice.FAULTS_ENV, ""))
    delay = practice.sandbox_delay()
    empty_since: float | None = None
    also: list[Any] = []  # the ports of ending sandboxes it took over (lasting_ports.py)
    try:
        while True:
            time.sleep(0.5)
            if not folder.is_dir() or _no_longer_mine(info):
                _said("ending: its state folder or server.json is no longer its own")
                return 0
            asked = take_request(folder)  # a command's own faults (none): a rehearsal's end
            if asked is not None:
                switch_faults(server.state, asked, delay)
                _write_info(info, server, asked)
            taken = take_port_request(folder)
            if taken is not None:
                also.append(_serve_also(*taken))
            with server.state.lock:
                empty = not server.state.holds_resources()
            if not empty:
                empty_since = None
            elif empty_since is None:
                empty_since = time.monotonic()
            elif time.monotonic() - empty_since >= linger and _withdrawn(folder, info):
                _said(f"ending: it has held nothing for {linger:g} s")
                return 0
    finally:
        if not _no_longer_mine(info):
            info.unlink(missing_ok=True)
        for each in [server, *also]:
            if each is not None:
                each.shutdown()


def _serve_also(port: int, token: str) -> Any:
    """A server on ``port`` with ``token`` over the same home, for the watchdogs an ending
    sandbox armed; None where the port is taken meanwhile (said in this sandbox's log)."""
    from tpuwizard.sandbox.serving import start_in_thread

    try:
        server = practice.make_sandbox_server(port=port, token=token)
    except OSError as err:
        print(f"could not serve port {port} for a sandbox handing over: {err}", flush=True)
        return None
    start_in_thread(server)
    _said(f"serving {server.endpoint} too (taken over from a command ending)")
    return server


def _said(text: str) -> None:
    """A line in lasting-sandbox.log (this process's output): when, which process, what."""
    print(f"{time.time():.2f} pid {os.getpid()}: {text}", flush=True)


def _withdrawn(folder: Path, info: Path) -> bool:
    """Stop being attachable, unless a command is attached (it holds the lock shared): then
    stay, as Google does not go away under a command that is using it. With the lock held
    exclusively, server.json goes, so nobody attaches from now on."""
    try:
        fd = practice.lasting_lock(folder, exclusive=True)
    except BlockingIOError:
        return False
    try:
        if not _no_longer_mine(info):
            info.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)


def _write_info(info: Path, server: Any, faults: str) -> None:
    """server.json, whole: where it serves, its token (readable by this user only), its faults."""
    tmp = info.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        data = {"endpoint": server.endpoint, "pid": os.getpid(), "token": server.token}
        json.dump({**data, "faults": faults}, f)
    os.replace(tmp, info)


def _no_longer_mine(info: Path) -> bool:
    from tpuwizard.session.practice.lasting_info import read_server_info

    try:
        return bool(read_server_info(info)["pid"] != os.getpid())
    except (OSError, ValueError, KeyError, TypeError):
        return True


if __name__ == "__main__":
    sys.exit(main())
