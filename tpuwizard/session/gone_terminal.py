"""Output to a terminal that is gone (a closed window, a dropped SSH session, a closed pipe) is
dropped, never raised: a stop that deletes what a run created must not fail, nor a command end
early, because a line could not be shown.

Once a write to stdout or stderr fails that way, its file descriptor is pointed at /dev/null, so
every later write there succeeds: ours, the interpreter's flush at exit and a child's alike.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import IO, Any

# What a terminal that is gone answers a write: EIO once hung up (ENXIO on some systems); a
# closed file descriptor, EBADF; a pipe whose reader has gone, EPIPE.
GONE_ERRNOS = frozenset({errno.EIO, errno.ENXIO, errno.EBADF, errno.EPIPE})


class DroppingStream:
    """A text stream (``sys.stdout``, ``sys.stderr``) whose writes never raise for a terminal
    that is gone: that text is dropped, and the descriptor is pointed at /dev/null. Anything
    else (``isatty``, ``encoding``...) is the stream's own."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as a text stream answers bytes (click tells them so)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not self.gone:
            self._do(self.stream.write, text)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            self._do(self.stream.flush)

    def _do(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except ValueError:  # the file was closed
            self.gone = True
        except OSError as err:
            if err.errno not in GONE_ERRNOS:
                raise
            self.gone = True
            self._to_null()

    def _to_null(self) -> None:
        """Later writes to this descriptor, from anyone, go nowhere instead of failing; what the
        stream still holds in its buffer with them."""
        with contextlib.suppress(OSError, ValueError, AttributeError):
            fd = self.stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)

    def isatty(self) -> bool:
        if self.gone:
            return False
        try:
            return self.stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes written there would pass the check above
            raise AttributeError(name)
        return getattr(self.stream, name)


def drop_output_to_gone_terminals() -> None:
    """From now on in this process, output that a gone terminal refuses is dropped (once is
    enough: a second call changes nothing)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, DroppingStream):
            setattr(sys, name, DroppingStream(stream))


def quietly(say: Any, text: str) -> None:
    """Say ``text`` if it can be said: whatever the terminal (or a test's stand-in for it) does,
    the caller, a stop under way, goes on."""
    with contextlib.suppress(Exception):
        say(text)
