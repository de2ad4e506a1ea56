"""Practice mode: start the sandbox in this process and point the TPU client at it."""

from __future__ import annotations

import os
from pathlib import Path

from tpuwizard.core import paths
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, GOOGLE_ENDPOINT, TOKEN_ENV
from tpuwizard.session.practice import lasting_info

PRACTICE_PROJECT = "tpuwizard-practice"
FAULTS_ENV = "TPUWIZARD_SANDBOX_FAULTS"
DELAY_ENV = "TPUWIZARD_SANDBOX_DELAY"
LINGER_ENV = "TPUWIZARD_SANDBOX_LINGER"  # seconds a lasting sandbox stays up holding nothing
# Pairing with an OpenSSH server: the sandbox writes node ssh-keys into this file, and workers
# are reached over SSH on this loopback port instead of through a local shell.
SSH_PORT_ENV = "TPUWIZARD_SANDBOX_SSH_PORT"
AUTHORIZED_KEYS_ENV = "TPUWIZARD_SANDBOX_AUTHORIZED_KEYS"


LASTING_SERVER_FILE = "server.json"  # a sandbox that outlives its command: see lasting.py
# Where a lasting sandbox takes over from one in a process that is ending (hand_over): it
# serves on the same port with the same token, so a watchdog already armed still reaches it.
LASTING_PORT_ENV = "TPUWIZARD_LASTING_PORT"
LASTING_TOKEN_ENV = "TPUWIZARD_LASTING_TOKEN"


def start_sandbox(faults: str | None = None, delay: float | None = None):  # -> SandboxServer
    """Serve the sandbox on a free loopback port from a daemon thread and export its endpoint.

    State lives under ``$TPUWIZARD_HOME/sandbox`` so a restarted tpuwizard sees the same nodes.
    Where a lasting sandbox is running (one holds a kept node), that one is used instead, so
    two servers never write the same state.
    """
    from tpuwizard.sandbox.serving import start_in_thread

    check_settings()
    read_only_home_refused()
    if attach_lasting_sandbox():
        return None
    server = make_sandbox_server(faults, delay)
    start_in_thread(server)
    os.environ[ENDPOINT_ENV] = server.endpoint
    os.environ[TOKEN_ENV] = server.token or ""
    return server


def read_only_home_refused() -> None:
    """The practice cloud is its state folder in the home: where ``status`` or ``down`` work from
    a read-only home (paths.allow_read_only_home), it cannot serve from there. Said as bad input
    before any thread or lock is started, rather than failing in the server's threads."""
    from tpuwizard.core.errors import BadInput

    home = paths.read_only_home()
    if home is None:
        return
    raise BadInput(
        f"The practice cloud keeps its nodes in {home / 'sandbox'}, and TPUWIZARD_HOME {home} "
        "is read-only: it cannot run from there. Practice nodes bill nothing; make the home "
        "writable again to list or delete them. (A `tpuwizard sandbox serve` running elsewhere, "
        "its TPUWIZARD_TPU_ENDPOINT and TPUWIZARD_SANDBOX_TOKEN exported, serves its own nodes.)"
    )


def ssh_port() -> int | None:
    """The loopback port of the OpenSSH server practice workers are reached through, or None:
    then a local shell reaches them, and nothing logs in (no key is put anywhere for them)."""
    port = os.environ.get(SSH_PORT_ENV)
    return int(port) if port else None


def make_sandbox_server(
    faults: str | None = None, delay: float | None = None, port: int = 0, token: str | None = None
):  # -> SandboxServer
    """The sandbox server over ``$TPUWIZARD_HOME/sandbox``, configured from the environment."""
    from tpuwizard.sandbox.server import make_server

    if delay is None:
        delay = sandbox_delay()
    keys = os.environ.get(AUTHORIZED_KEYS_ENV)
    return make_server(
        paths.state_dir() / "sandbox",
        faults=faults if faults is not None else os.environ.get(FAULTS_ENV),
        delay=delay,
        authorized_keys=Path(keys) if keys else None,
        ssh_port=ssh_port() or 22,
        port=port,
        token=token or new_token(),
    )


def check_settings() -> None:
    """The sandbox's settings from the environment, each bad one bad input (exit 2): checked
    whichever sandbox would serve, this process's or a running lasting one (to which this one
    may be handed at the end), so a sandbox already running never hides a bad value."""
    sandbox_delay()
    sandbox_linger()


def sandbox_delay() -> float:
    """Seconds a practice node takes to become READY: ``TPUWIZARD_SANDBOX_DELAY``, default 2."""
    return _seconds_setting(DELAY_ENV, 2.0, "0.5")


def sandbox_linger() -> float:
    """Seconds a lasting sandbox stays up once it holds nothing: ``TPUWIZARD_SANDBOX_LINGER``,
    default 60. Never nan (it would never end: no comparison with nan holds) nor infinite."""
    return _seconds_setting(LINGER_ENV, 60.0, "5")


def _seconds_setting(name: str, default: float, example: str) -> float:
    """The environment variable ``name`` as a finite number of seconds of 0 or more; anything
    else is bad input, said before any sandbox starts."""
    import math

    from tpuwizard.core.errors import BadInput, shown

    text = os.environ.get(name, "").strip() or str(default)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise BadInput(
            f"{name}={shown(text)} is not a number of seconds of 0 or more: set it to one "
            f"(e.g. {name}={example}), or unset it for the default of {default:g} seconds."
        )
    return seconds


def attach_lasting_sandbox() -> bool:
    """Point the client at the lasting sandbox when one is running; True if so.

    Attaching and the server's lingering out exclude each other (see :func:`lasting_lock`):
    this process holds a shared lock on the sandbox until it exits, and the server ends only
    when it can take the lock exclusively, removing its server.json while it holds it. So an
    attached command never meets a server that is going away, and one that comes too late
    finds no server.json and starts a fresh sandbox."""
    import socket

    folder = paths.state_dir() / "sandbox"
    info = folder / LASTING_SERVER_FILE
    if not info.exists():  # no lock file made where there is no lasting sandbox
        return False
    fd = lasting_lock(folder, exclusive=False)
    try:  # untrusted input (core/untrusted.py): a FIFO or /dev/zero in its place is no server
        data = lasting_info.read_server_info(info)
        endpoint, pid, token = data["endpoint"], data["pid"], data["token"]
        os.kill(pid, 0)
        host, port = endpoint.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=2):
            pass
    except (OSError, ValueError, KeyError, TypeError):
        os.close(fd)
        return False
    if str(folder) in _ATTACHED:
        os.close(fd)  # this process holds the lock already: one is enough
    else:
        _ATTACHED[str(folder)] = fd  # held until this process exits
    os.environ[ENDPOINT_ENV] = endpoint
    os.environ[TOKEN_ENV] = token
    serving = str(data.get("faults") or "")
    _refuse_faults_it_does_not_serve(serving)
    if serving.strip() and not os.environ.get(FAULTS_ENV, "").strip():
        _end_its_faults(folder, info)
    return True


def _end_its_faults(folder: Path, info: Path) -> None:
    """This command asks for no faults: a rehearsal's faults were that rehearsal's, and end
    before this command's first call (they stayed for every later command)."""
    from tpuwizard.core.errors import BadInput
    from tpuwizard.session.practice.lasting_faults import ask_for_faults

    if not ask_for_faults(folder, info, ""):
        raise BadInput(
            "The lasting practice sandbox did not drop an earlier rehearsal's faults in time: "
            "end it with `tpuwizard down --sandbox --all`, then try again."
        )


def _refuse_faults_it_does_not_serve(serving: str) -> None:
    """Faults asked for here that the lasting sandbox was not started with: they cannot apply
    (it serves every command the same), and a rehearsal that silently gets none proves nothing."""
    from tpuwizard.core.errors import BadInput, shown

    asked = os.environ.get(FAULTS_ENV, "").strip()
    if not asked or asked == serving.strip():
        return
    now = f"with {FAULTS_ENV}={shown(serving)}" if serving.strip() else "with no faults"
    raise BadInput(
        f"{FAULTS_ENV}={shown(asked)} cannot apply: a lasting practice sandbox (one that "
        "outlives its command, for a node kept or left running; it stays up a while once it "
        f"holds nothing) is already serving, started {now}. Unset {FAULTS_ENV}, end it with "
        "`tpuwizard down --sandbox --all`, then set it again."
    )


LASTING_LOCK_FILE = "lasting.lock"
_ATTACHED: dict[str, int] = {}  # sandbox folder -> the descriptor holding its shared lock


def lasting_lock(folder: Path, exclusive: bool) -> int:
    """An open descriptor on ``folder``'s lasting-sandbox lock, locked shared (a command using
    the server) or, when ``exclusive``, only if nobody holds it; raises BlockingIOError then.
    The lock goes with the descriptor (closed, or its process gone)."""
    import fcntl

    fd = os.open(folder / LASTING_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        raise
    return fd


def start_lasting_sandbox(timeout: float = 30.0, port: int = 0, token: str | None = None) -> None:
    """Start (or attach to) a sandbox in its own process that outlives this command; with
    ``port`` and ``token``, it serves there with that token (see :func:`hand_over`)."""
    import subprocess
    import sys
    import time

    sandbox_delay()  # said here, not as "did not start" after the child failed on it
    sandbox_linger()
    if attach_lasting_sandbox():
        return
    env = dict(os.environ)
    if port:
        env[LASTING_PORT_ENV], env[LASTING_TOKEN_ENV] = str(port), token or ""
    folder = paths.state_dir() / "sandbox"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lasting-sandbox.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tpuwizard.session.practice.lasting"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,  # a Ctrl+C in this terminal must not end the practice cloud
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if attach_lasting_sandbox():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(f"the practice sandbox did not start; see {folder / 'lasting-sandbox.log'}")


def hand_over(server, always: bool = False) -> bool:  # server: SandboxServer
    """This process is ending while its sandbox holds a node, a queued resource or an instance:
    hand them to a lasting sandbox on the same port and token, as Google would go on serving
    them. A node kept in the wizard has a watchdog that calls this endpoint at its deadline;
    without this it would call a server that no longer exists. ``always``: even while it holds
    nothing (a node to keep is about to be made). True when handed over."""
    with server.state.lock:
        holds = server.state.holds_resources()
    if not holds and not always:
        return False
    port, token = server.server_address[1], server.token
    # The answers in flight finish first (a watchdog's call among them); the state is on disk:
    # the lasting one reads it from there.
    server.stop_after_answers()
    if not attach_lasting_sandbox():
        start_lasting_sandbox(port=port, token=token)
        return True
    # Another command's lasting sandbox serves this home already: it serves this port too.
    from tpuwizard.session.practice.lasting_ports import ask_to_serve

    if not ask_to_serve(paths.state_dir() / "sandbox", port, token):
        raise RuntimeError(
            f"the practice sandbox did not take over port {port}: the watchdogs armed here "
            f"cannot reach it; see {paths.state_dir() / 'sandbox' / 'lasting-sandbox.log'}"
        )
    return True


def is_practice() -> bool:
    """True when the TPU client is pointed anywhere but Google."""
    endpoint = os.environ.get(ENDPOINT_ENV)
    return bool(endpoint) and endpoint != GOOGLE_ENDPOINT


def make_foreground_sandbox(port: int, faults: str | None, delay: float):  # -> SandboxServer
    """A sandbox server for ``tpuwizard sandbox serve`` (the caller runs serve_forever); paired
    with an sshd by the same settings as one in-process."""
    return make_sandbox_server(faults, delay, port=port)


def new_token() -> str:
    """A per-server secret: every sandbox a user starts answers only requests that carry it."""
    import secrets  # here: the wizard's first screen imports this module, not the token

    return secrets.token_urlsafe(24)
