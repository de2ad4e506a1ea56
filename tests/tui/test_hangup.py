"""The terminal goes away under a running wizard (a closed window, a dropped SSH session): it
finishes its teardown and exits 129, though nothing can be written to that terminal any more.

Each test runs the real command on a pseudo-terminal and closes the terminal's far end, as a
terminal emulator or sshd does; where the terminal is the wizard's controlling one, the kernel
then sends it SIGHUP. The bound on the exit is a hang detector, not a timing."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import threading

import pytest

from tests.conftest import REPO, clean_env
from tests.integration.launch_helpers import ledger_all_gone, ledger_holds, sandbox_is_empty
from tests.tui.pilot_helpers import make_leftover, on_screen, sandbox_nodes, until
from tests.waiting import wait_until
from tpuwizard.tui.app import WizardApp

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


@pytest.fixture
def terminals():
    opened: list[Terminal] = []

    def start(argv: list[str], **kwargs) -> Terminal:
        opened.append(Terminal(argv, **kwargs))
        return opened[-1]

    yield start
    for terminal in opened:  # a test that failed early: no wizard outlives it
        if terminal.proc.poll() is None:
            os.killpg(terminal.proc.pid, signal.SIGKILL)
            terminal.proc.wait()
        if terminal._open.is_set():
            terminal.hang_up()


WIZARD = [sys.executable, "-m", "tpuwizard", "--sandbox"]


def test_a_terminal_gone_without_a_sighup_is_noticed(terminals):
    # Not its controlling terminal, so no SIGHUP comes: the wizard sees the hangup itself.
    terminal = terminals(WIZARD, controlling=False)
    terminal.wait_for(b"Recommended")
    terminal.hang_up()
    assert terminal.exit_code() == 129


def test_a_hangup_with_the_leftovers_dialog_open_deletes_nothing_and_exits(terminals, home):
    leftover = make_leftover(home)
    terminal = terminals(WIZARD)
    terminal.wait_for(leftover.encode())  # the dialog that asks about it
    terminal.hang_up()
    assert terminal.exit_code() == 129
    assert [n.rsplit("/", 1)[1] for n in sandbox_nodes(home)] == [leftover]  # none said delete


def test_a_hangup_while_a_node_is_created_deletes_it_and_exits(terminals, home, tmp_path):
    report = tmp_path / "creating"
    # A slow practice cloud: the node is still being created when the terminal goes, so its
    # delete is refused for a while, as Google's is, and the ledger says delete_pending.
    terminal = terminals(
        [sys.executable, "-m", "tests.tui.wizard_on_terminal", str(report)],
        TPUWIZARD_SANDBOX_DELAY="5",
    )
    wait_until(lambda: report.exists() or terminal.proc.poll() is not None, 120, "the create")
    assert report.exists(), f"the wizard ended first: {terminal.shown[-800:]!r}"
    terminal.hang_up()
    # Then SIGTERM, as a logout may follow up, during the teardown: it neither starts a second
    # one nor changes the exit code, the first signal's.
    wait_until(lambda: ledger_holds(home, "delete_pending"), HANG_S, "the teardown")
    terminal.proc.send_signal(signal.SIGTERM)
    assert terminal.exit_code() == 129
    assert ledger_holds(home, "gone") and ledger_all_gone(home)
    assert sandbox_is_empty(home)


async def test_a_sighup_to_a_test_s_app_ends_it_but_not_the_test_runner(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test() as pilot:
        await on_screen(pilot, "RouteScreen")
        app.on_signal(signal.SIGHUP)  # what the loop's handler calls
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert app.return_code == 129
    assert not app.hangup.noticed  # so no os._exit is on its way
    assert "tpuwizard-hangup-exit" not in [t.name for t in threading.enumerate()]
