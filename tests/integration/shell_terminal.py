"""A person's terminal: an interactive ``bash`` on a pseudo-terminal it controls, a command typed
into it, and the window closed (the pty's master end) at a chosen moment. The kernel then hangs
up the shell, which passes SIGHUP on to its job; every later write to the terminal fails (EIO).

The typed command runs under ``exit_recorder`` (tests/integration/exit_recorder.py), which writes
the code the shell would have shown, as ``$?`` could not be read from a shell that is gone."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, tpuwizard_cmd

# Makes the pseudo-terminal the shell's controlling terminal (as a terminal window does), then
# becomes the shell. Popen's start_new_session gives it a session of its own first.
_CONTROLLING = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execvp('bash', ['bash', '--norc', '--noprofile', '-i'])"
)


class ShellTerminal:
    """``bash -i`` on a pseudo-terminal; :meth:`type` a line, :meth:`close` the window."""

    def __init__(self, cwd: Path, environ: dict[str, str]) -> None:
        self.fd, child = os.openpty()
        self.shell = subprocess.Popen(
            [sys.executable, "-c", _CONTROLLING],
            stdin=child,
            stdout=child,
            stderr=child,
            cwd=cwd,
            # The typed command's recorder is this repository's tests.integration.exit_recorder:
            # found from the shell's folder through PYTHONPATH, as it is run there.
            env={
                **environ,
                "TERM": "xterm",
                "PS1": "$ ",
                "HISTFILE": "/dev/null",
                "PYTHONPATH": os.pathsep.join(
                    p for p in (str(REPO), environ.get("PYTHONPATH", "")) if p
                ),
            },
            start_new_session=True,
        )
        os.close(child)
        self.seen = b""

    def read(self, seconds: float = 0.05) -> None:
        """Take what the terminal shows (a terminal that nobody reads would block its writers)."""
        end = time.monotonic() + seconds
        while self.fd >= 0 and time.monotonic() < end:
            if select.select([self.fd], [], [], 0.02)[0]:
                try:
                    self.seen += os.read(self.fd, 1 << 16)
                except OSError:
                    return

    def type(self, line: str) -> None:
        self.read(0.2)  # the prompt first
        os.write(self.fd, line.encode() + b"\n")

    def close(self) -> None:
        """The window is closed: the master end goes, and the kernel hangs the terminal up."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def end(self) -> None:
        self.close()
        if self.shell.poll() is None:
            self.shell.kill()
        self.shell.wait()


def typed_command(code_file: Path, *args: str) -> str:
    """The line typed: ``tpuwizard ARGS``, its exit code written to ``code_file``."""
    import shlex

    recorder = [sys.executable, "-m", "tests.integration.exit_recorder", str(code_file)]
    return shlex.join([*recorder, *tpuwizard_cmd(*args)])
