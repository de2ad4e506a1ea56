"""When the terminal goes away (a closed window, a dropped SSH session) the wizard still tears
down and exits 129, though nothing can be written to a terminal that no longer exists.

Textual writes through a thread with a bounded queue: once the terminal answers EIO that thread
dies, the queue fills, and the next write blocks the app for ever (its signal handlers too),
while its input thread spins on end-of-file. So the wizard's driver drops output once the
terminal is gone, stops reading, and says so as a hangup does (SIGHUP); and once the app has
carried out its way out, :class:`Hangup` ends the process with ``os._exit``, after any deletion
still under way: a normal exit would flush to, and restore, a terminal that is not there. The
ledger needs no flush: each record is fsynced as it is written.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, NoReturn

from textual.drivers.linux_driver import LinuxDriver

from tpuwizard.session.gone_terminal import GONE_ERRNOS

if TYPE_CHECKING:
    from textual.app import App
    from textual.driver import Driver

SHUTDOWN_GRACE_S = 2.0  # for Textual's own shutdown, before the exit is forced
WATCH_S = 1.0  # how often the watch on the terminal wakes (it is woken at once by a hangup)


class TerminalOutput:
    """The file Textual's writer thread writes to. It never raises, so that the thread goes on
    emptying its queue and no write of the app ever blocks; once the terminal is gone, writes
    are dropped."""

    def __init__(self, file: IO[str], gone: Callable[[], None]) -> None:
        self.file, self.gone = file, gone
        self.failed = False

    def write(self, text: str) -> None:
        self._do(self.file.write, text)

    def flush(self) -> None:
        self._do(self.file.flush)

    def _do(self, call: Callable[..., Any], *args: Any) -> None:
        if self.failed:
            return
        try:
            call(*args)
        except ValueError:  # the file was closed
            self._gone()
        except OSError as err:
            if err.errno in GONE_ERRNOS:
                self._gone()
            # Else (EAGAIN from a terminal another program made non-blocking) only this text is
            # lost: Textual's next frame redraws, and a launch is never stopped for it.

    def _gone(self) -> None:
        self.failed = True
        self.gone()

    def fileno(self) -> int:
        return self.file.fileno()

    def isatty(self) -> bool:
        return self.file.isatty()


class HangupSafeDriver(LinuxDriver):
    """Textual's Linux and macOS driver, for a terminal that may go away while the app runs."""

    def __init__(self, app: App[Any], **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        if self._file is not None:  # None without a stderr, where Textual cannot run anyway
            self._file = TerminalOutput(self._file, self.terminal_gone)  # type: ignore[assignment]
        self._gone_lock = threading.Lock()
        self._gone = False
        self._watching = False

    def start_application_mode(self) -> None:
        super().start_application_mode()
        if not self._watching and os.isatty(self.fileno) and hasattr(select, "poll"):
            self._watching = True  # once: a resume after Ctrl+Z starts application mode again
            watch = threading.Thread(target=self._watch, name="tpuwizard-terminal", daemon=True)
            watch.start()

    def _watch(self) -> None:
        """Notice a hangup even when nothing is being written and no SIGHUP comes (the terminal
        was not this process's controlling one)."""
        poller = select.poll()
        poller.register(self.fileno, 0)  # nothing asked for: POLLHUP and POLLERR come anyway
        while not (ready := poller.poll(WATCH_S * 1000)):
            pass
        if ready[0][1] & select.POLLHUP:
            self.terminal_gone()
        # Else POLLNVAL: a system that cannot poll a terminal (older macOS); no watch there.

    def terminal_gone(self) -> None:
        """Once, from whichever thread noticed: stop reading and tell the app, as a hangup does."""
        with self._gone_lock:
            if self._gone:
                return
            self._gone = True
        self.exit_event.set()  # the input thread leaves its loop instead of spinning on EOF
        os.kill(os.getpid(), signal.SIGHUP)


def safe_driver(chosen: type[Driver]) -> type[Driver]:
    """The driver the wizard runs on: Textual's choice, made safe where it is the Linux one."""
    return HangupSafeDriver if chosen is LinuxDriver else chosen  # not one TEXTUAL_DRIVER named


class Hangup:
    """The app's side: after a hangup, it ends the process once the app's way out is carried
    out and no deletion is under way, whatever Textual's shutdown does."""

    def __init__(self, busy: Callable[[], bool]) -> None:
        self.busy = busy  # a launch or a deletion under way? No exit cuts one short
        self.noticed = False
        self.code: int | None = None  # the app's exit code, once its way out is carried out
        self._exiting = False

    def signalled(self, signum: int, headless: bool = False) -> None:
        """A stop signal reached the app; SIGHUP means the terminal is gone. A headless app (a
        test's) has no terminal to lose, and must not end the test runner's process."""
        if signum == signal.SIGHUP and not headless:
            self.noticed = True
            self._exit_soon()

    def finished(self, code: int) -> None:
        """The app has carried out its way out (its teardown done) and asked Textual to exit."""
        self.code = code
        self._exit_soon()

    @contextlib.contextmanager
    def ending(self) -> Iterator[None]:
        """Around the app's run: after a hangup, exit at its end without touching the terminal
        (no message printed, no stdio flushed), as soon as no deletion is under way."""
        try:
            yield
        finally:
            if self.noticed:
                self._exit()

    def _exit_soon(self) -> None:
        # Textual's shutdown gets a grace to return; a terminal write could still block it.
        if self.noticed and self.code is not None and not self._exiting:
            self._exiting = True
            threading.Thread(
                target=self._exit, args=(SHUTDOWN_GRACE_S,), name="tpuwizard-hangup-exit"
            ).start()

    def _exit(self, after_s: float = 0.0) -> NoReturn:
        time.sleep(after_s)
        while self.busy():
            time.sleep(0.1)
        os._exit(self.code if self.code is not None else 128 + signal.SIGHUP)
