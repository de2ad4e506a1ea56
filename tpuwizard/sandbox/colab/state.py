"""The Colab stand-in's state: its "server" (the runtimes assigned to the account) and its local
session file (as colab_cli's ``state.py`` keeps ``sessions.json``), one JSON file under a lock,
in the folder ``TPUWIZARD_COLAB_HOME`` names. Each runtime's disk is a folder beside it whose
``content/`` is the runtime's ``/content``.

Faults (``;``-separated, as the other stand-ins'; from ``TPUWIZARD_COLAB_FAULTS``):
``signed_out`` (no token: every command asks for the browser sign-in, as auth.py does),
``no_tpu`` or ``no_tpu=400`` (``new --tpu`` refused: a 412, no TPU runtime free, or a 400, no
entitlement), ``vanish_on_exec=N`` (the runtime is gone when the N-th exec starts, default the
first), ``exec_timeout=S`` (each exec's ``--timeout`` passes after S seconds instead),
``hang_exec=S`` (the first exec stops answering, and so does every call made in the S seconds
after it started: a network gone mid-exec); for ``usage`` (0.8.0, cli.py's
``TPUWIZARD_COLAB_VERSION``): ``cu_balance=N`` and ``cu_rate=R`` (the account's compute units
and hourly rate, 0 by default), ``other_assignments=N`` (runtimes of the account that are not
the stand-in's sessions: a notebook open in a browser), ``usage_fails`` (its fetch fails).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tpuwizard.core.evidence.verifier import cpu_device_env
from tpuwizard.core.untrusted import MIB, NotASmallFile, loads, open_regular, read_fd

HOME_ENV = "TPUWIZARD_COLAB_HOME"
FAULTS_ENV = "TPUWIZARD_COLAB_FAULTS"
ENV_KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # execution.py's ENV_KEY_REGEX
STATE_LIMIT_BYTES = 16 * MIB  # a few sessions' records: far more is no state of the stand-in's


def parse_colab_faults(spec: str | None) -> dict[str, str]:
    faults: dict[str, str] = {}
    for part in (spec or "").split(";"):
        key, _, value = part.strip().partition("=")
        if key:
            faults[key] = value
    return faults


def colab_home() -> Path:
    home = os.environ.get(HOME_ENV)
    if not home:
        raise SystemExit(f"the Colab stand-in needs {HOME_ENV} (its state folder)")
    path = Path(home)
    path.mkdir(parents=True, exist_ok=True)
    return path


def runtime_root(home: Path, endpoint: str) -> Path:
    """The runtime's disk: ``content/`` under it is ``/content``."""
    return home / "runtimes" / endpoint


class StateUnreadable(Exception):
    """The stand-in's state file is no small JSON file of its own (a FIFO would hang its read,
    ``/dev/zero`` never end it): said by every command, and left as it is."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"[colab] The practice Colab stand-in cannot read its state file {path}: {why}. Move "
            "that file aside: the stand-in then starts with no runtimes (its sessions are "
            f"forgotten; their disks stay under {path.parent / 'runtimes'})."
        )


@contextlib.contextmanager
def locked_state(home: Path) -> Iterator[dict[str, Any]]:
    """The state, read (at most STATE_LIMIT_BYTES, of a regular file only) and written back
    under an exclusive lock; StateUnreadable for a file that is no such state."""
    path = home / "state.json"
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    try:
        fd = open_regular(path, os.O_RDWR)
    except NotASmallFile as err:  # a FIFO, a device
        raise StateUnreadable(path, err.why) from None
    except IsADirectoryError:  # open_regular's own words; O_RDWR fails before its check
        raise StateUnreadable(path, "it is a folder, not a regular file") from None
    except OSError as err:
        raise StateUnreadable(path, err.strerror or str(err)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            state = loads(read_fd(fd, STATE_LIMIT_BYTES, path) or b"{}", max_depth=None)
            if not isinstance(state, dict):
                raise ValueError("it holds no JSON object")
        except NotASmallFile as err:
            raise StateUnreadable(path, err.why) from None
        except ValueError as err:
            raise StateUnreadable(path, f"it is damaged ({err})") from None
        state.setdefault("server", {})  # endpoint -> accelerator, variant, shape
        state.setdefault("local", {})  # name -> endpoint, accelerator, running, pids
        state.setdefault("execs", 0)
        yield state
        data = json.dumps(state, indent=2).encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def log_call(home: Path, argv: list[str]) -> None:
    """Every call, one JSON line: tests read whether (and how) the program was called."""
    with (home / "calls.log").open("a") as log:
        log.write(json.dumps({"at": time.time(), "argv": argv}) + "\n")


def wait_out_hang(home: Path) -> None:
    """While a ``hang_exec`` stall lasts, no call answers."""
    marker = home / "hang-until"
    try:
        until = float(marker.read_text())
    except (FileNotFoundError, ValueError):
        return
    while time.time() < until:
        time.sleep(0.1)


def resolve_session(home: Path, name: str | None) -> tuple[str, dict[str, Any]] | None:
    """common.py's resolve_session and get_session: the session, or its words and exit 1."""
    with locked_state(home) as state:
        if name is None:
            if len(state["local"]) != 1:
                print(
                    "[colab] Error: No active sessions found. Create one with 'colab new'.",
                    flush=True,
                )
                return None
            name = next(iter(state["local"]))
        s = state["local"].get(name)
    if s is None:
        print(f"[colab] Session '{name}' not found.", flush=True)
        return None
    return name, s


def runtime_env(accelerator: str) -> dict[str, str]:
    """What the runtime's processes see: JAX's CPU devices, one per chip of the shape."""
    del accelerator  # v5e1 and v6e1 both have one chip
    env = cpu_device_env(1)
    env.pop("JAX_PLATFORMS", None)
    env.pop("COURSE_EXPECT_PLATFORM", None)
    return env
