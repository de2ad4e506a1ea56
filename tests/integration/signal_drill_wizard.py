"""The signal drill's wizard cases: `python -m tpuwizard --sandbox` on a pseudo-terminal, walked
to Create by key presses, signalled at a point read from the ledger, the sandbox's state and the
worker's job folders, and judged as the commands are (tests/integration/signal_drill.py)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import node_state, sandbox_names
from tests.integration.launch_helpers import env, ledger_holds
from tests.integration.signal_drill import (
    LONG,
    Case,
    Outcome,
    Stopped,
    clean_up,
    judge,
    shell_code,
    up_node,
)

ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\x1b\][^\x07]*\x07")
SIZE = (120, 36)  # columns, rows: every step and its buttons in view


class Terminal:
    """The wizard on a pseudo-terminal of its own session, as a user's terminal runs it."""

    def __init__(self, cwd: Path, environ: dict[str, str]) -> None:
        self.fd, child = os.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        self.proc = subprocess.Popen(
            tpuwizard_cmd("--sandbox"),
            stdin=child,
            stdout=child,
            stderr=child,
            cwd=cwd,
            env={**environ, "TERM": "xterm-256color"},
            start_new_session=True,
        )
        os.close(child)
        self.seen = b""  # what arrived since the last wait that found its text

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.fd < 0:  # hung up: only time passes
                time.sleep(0.02)
            elif select.select([self.fd], [], [], 0.02)[0]:
                try:
                    self.seen += os.read(self.fd, 1 << 16)
                except OSError:  # the wizard has gone and its terminal with it
                    time.sleep(0.02)

    def wait_for(self, text: str, seconds: float = 60) -> None:
        end = time.monotonic() + seconds
        while text not in ANSI.sub(b"", self.seen).decode(errors="replace"):
            if time.monotonic() > end or self.proc.poll() is not None:
                raise AssertionError(f"the wizard never showed {text!r}")
            self.pump(0.05)
        self.seen = b""

    def keys(self, keys: str, settle: float = 0.5) -> None:
        """Type ``keys`` one at a time, as fingers do (a burst reads as one paste)."""
        self.pump(settle)
        for key in keys:
            os.write(self.fd, key.encode())
            self.pump(0.08)

    def hang_up(self) -> None:
        os.close(self.fd)
        self.fd = -1

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.fd >= 0:
            os.close(self.fd)


def walk_to_create(term: Terminal, script: Path | None) -> None:
    """Route, Account, Capacity and Zones as they come; the script on Review; Create."""
    term.wait_for("1 Route")
    term.keys("\r")
    term.wait_for("2 Account")
    term.keys("\r")  # focus starts on Next
    term.wait_for("3 Capacity")
    term.keys("\r")  # the size field: to the table
    term.keys("\r")  # the table: its highlighted slice
    term.wait_for("4 Zones")
    term.keys("\r", settle=1.5)  # once the survey has filled the table: its first zone
    term.wait_for("5 Review")
    # name, deadline, packages, watchdog, deeper checks: the script field; then files, Create
    term.keys("\t" * 5 + (str(script) if script else "") + "\t\t\r")


def run_wizard_case(
    case: Case, root: Path, delay: float = 0.3, create_delay: float = 2.0
) -> Outcome:
    """One wizard case in its own state folder under ``root``; cleaned up as the others. The
    wizard walks with its defaults (a v5e, the TPU API's): its cases are the TPU API's only.
    ``wizard+kept``: a node kept by `up` first; it must stay, READY, whatever the stop."""
    if case.backend != "tpu-api":
        raise ValueError(f"the wizard's drill walks the TPU API only, not {case.backend}")
    home = root / "state"
    root.mkdir(parents=True, exist_ok=True)
    kept = up_node(root, delay) if case.command == "wizard+kept" else None
    wait = create_delay if case.point == "create" else delay
    environ = env(TPUWIZARD_HOME=str(home), TPUWIZARD_SANDBOX_DELAY=str(wait))
    script = None
    if case.point == "script":
        script = root / "long.py"
        script.write_text(LONG)
    term = Terminal(root, environ)
    try:
        stopped = _stop_at(term, case, home, script, kept)
        state = node_state(home, kept) if kept else None  # before any follow-up teardown
        out = judge(case, stopped, home, root, left_expected=1 if kept else 0)
        if kept and state != "READY":
            out.problems.append(f"the kept node {kept} is {state}: a stop must leave it kept")
        return out
    finally:
        term.close()
        clean_up(home, root)


def _stop_at(
    term: Terminal, case: Case, home: Path, script: Path | None, kept: str | None = None
) -> Stopped:
    try:
        if case.point == "route":  # the first screen, once the kept node is on its bar
            term.wait_for("KEPT")
        else:
            walk_to_create(term, script)
    except AssertionError as err:
        return Stopped(shell_code(term.proc.poll()), False, [("err", str(err))])
    reached = case.point == "route" or _wait_for_point(term, case.point, home, kept)
    if reached:
        term.proc.send_signal(case.sig)
        if case.sig == signal.SIGHUP:  # the terminal was closed: nothing reads it any more
            term.hang_up()
    end = time.monotonic() + 60  # a minute after the signal, still running: it hangs
    while term.proc.poll() is None and time.monotonic() < end:
        term.pump(0.1)
    text = ANSI.sub(b"", term.seen).decode(errors="replace").splitlines()
    said = [line.strip() for line in text if re.search(r"[A-Za-z]{3}", line)][-3:]
    return Stopped(shell_code(term.proc.poll()), reached, [("err", line) for line in said])


def _wait_for_point(
    term: Terminal, point: str, home: Path, kept: str | None = None, seconds: float = 120
) -> bool:
    def job_started(kind: str) -> bool:
        return any(home.glob(f"sandbox/workers/*/*/*/w0/.tpuwizard/jobs/{kind}-*/pid"))

    def there() -> bool:
        names = sandbox_names(home) - {kept}
        state = node_state(home, next(iter(names))) if names else None
        if point == "create" and kept:  # the ledger holds the kept node's records already
            return bool(names)
        if point == "create":
            return ledger_holds(home, "created")
        if point == "ready":
            return state == "READY"
        if point == "teardown":
            return state == "DELETING" or b"9 Teardown" in ANSI.sub(b"", term.seen)
        return job_started(point)  # "bootstrap" or "script": its job on worker 0

    end = time.monotonic() + seconds
    while not there():
        if time.monotonic() > end or term.proc.poll() is not None:
            return False
        term.pump(0.02)
    return True
