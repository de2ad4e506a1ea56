"""Practice mode: start the sandbox in this process and point the TPU client at it."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from tpuwizard.core import paths
from tpuwizard.core.cloud.types import ENDPOINT_ENV, GOOGLE_ENDPOINT, TOKEN_ENV

PRACTICE_PROJECT = "tpuwizard-practice"
FAULTS_ENV = "TPUWIZARD_SANDBOX_FAULTS"
DELAY_ENV = "TPUWIZARD_SANDBOX_DELAY"
# Pairing with an OpenSSH server: the sandbox writes node ssh-keys into this file, and workers
# are reached over SSH on this loopback port instead of through a local shell.
SSH_PORT_ENV = "TPUWIZARD_SANDBOX_SSH_PORT"
AUTHORIZED_KEYS_ENV = "TPUWIZARD_SANDBOX_AUTHORIZED_KEYS"


def start_sandbox(faults: str | None = None, delay: float | None = None):  # -> SandboxServer
    """Serve the sandbox on a free loopback port from a daemon thread and export its endpoint.

    State lives under ``$TPUWIZARD_HOME/sandbox`` so a restarted tpuwizard sees the same nodes.
    """
    from tpuwizard.sandbox.server import make_server, start_in_thread

    if delay is None:
        delay = float(os.environ.get(DELAY_ENV, "2.0"))
    keys = os.environ.get(AUTHORIZED_KEYS_ENV)
    server = make_server(
        paths.state_dir() / "sandbox",
        faults=faults if faults is not None else os.environ.get(FAULTS_ENV),
        delay=delay,
        authorized_keys=Path(keys) if keys else None,
        ssh_port=int(os.environ.get(SSH_PORT_ENV) or 22),
        token=new_token(),
    )
    start_in_thread(server)
    os.environ[ENDPOINT_ENV] = server.endpoint
    os.environ[TOKEN_ENV] = server.token or ""
    return server


def is_practice() -> bool:
    """True when the TPU client is pointed anywhere but Google."""
    endpoint = os.environ.get(ENDPOINT_ENV)
    return bool(endpoint) and endpoint != GOOGLE_ENDPOINT


def make_foreground_sandbox(port: int, faults: str | None, delay: float):  # -> SandboxServer
    """A sandbox server for ``tpuwizard sandbox serve`` (the caller runs serve_forever)."""
    from tpuwizard.sandbox.server import make_server

    return make_server(
        paths.state_dir() / "sandbox",
        port,
        faults if faults is not None else os.environ.get(FAULTS_ENV),
        delay,
        token=new_token(),
    )


def new_token() -> str:
    """A per-server secret: every sandbox a user starts answers only requests that carry it."""
    return secrets.token_urlsafe(24)
