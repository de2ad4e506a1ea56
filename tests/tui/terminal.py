"""A real command on a pseudo-terminal, as a terminal emulator runs it: what it shows is read
all along, keys can be written to it, and its far end can be closed (a hangup)."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import threading

from tests.conftest import REPO, clean_env
from tests.waiting import wait_until

HANG_S = 60  # far more than a teardown in the sandbox takes: past it, the wizard hung


class Terminal:
    """A pseudo-terminal running one command. What it shows is read all along, as a terminal
    emulator does: unread, it would fill up and hold the wizard's writes."""

    def __init__(self, argv: list[str], controlling: bool = True, **env: str) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=REPO,
            env=clean_env(TERM="xterm-256color", **env),
            # A controlling terminal, as a terminal window gives its shell: closing it is a hangup.
            preexec_fn=(lambda: os.login_tty(0)) if controlling else os.setsid,
        )
        os.close(slave)
        self.shown = b""
        self._open = threading.Event()
        self._open.set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while self._open.is_set():
            if select.select([self.master], [], [], 0.05)[0]:
                try:
                    self.shown += os.read(self.master, 1 << 16)
                except OSError:  # the wizard has closed its side
                    return

    def wait_for(self, text: bytes, timeout: float = 60) -> None:
        def shown() -> bool:
            assert self.proc.poll() is None, f"the wizard ended first: {self.shown[-800:]!r}"
            return text in self.shown

        wait_until(shown, timeout, f"{text!r} on the terminal")

    def type(self, keys: bytes) -> None:
        """Keys as a fast typist or a paste sends them: every byte in one write()."""
        assert os.write(self.master, keys) == len(keys)

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does."""
        self._open.clear()
        self._reader.join()
        os.close(self.master)

    def exit_code(self) -> int:
        """The wizard's exit code; it fails the test, and kills the wizard, if it hangs."""
        try:
            return self.proc.wait(timeout=HANG_S)
        except subprocess.TimeoutExpired as hung:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"no exit within {HANG_S} s of the hangup") from hung
