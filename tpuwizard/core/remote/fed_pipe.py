"""A command's standard input written in pieces, each one counted, so a long copy (a script's
folder sent as one tar while the TPU bills) can say how far it is."""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable

PIECE_BYTES = 1024 * 1024


def communicate(
    proc: subprocess.Popen[bytes],
    data: bytes | None,
    timeout: float,
    progress: Callable[[int], None] | None = None,
) -> tuple[bytes, bytes]:
    """``proc.communicate(data, timeout)``; with ``progress``, ``data`` is written from a thread
    a piece at a time and ``progress(bytes written so far)`` called after each piece. A command
    that ends (or is killed) before it read everything ends the writing; its exit code says
    why. Raises :class:`subprocess.TimeoutExpired` as communicate does."""
    if progress is None or data is None or proc.stdin is None:
        return proc.communicate(data, timeout=timeout)
    pipe, proc.stdin = proc.stdin, None  # communicate then only reads

    def feed() -> None:
        try:
            for start in range(0, len(data), PIECE_BYTES):
                piece = data[start : start + PIECE_BYTES]
                pipe.write(piece)
                pipe.flush()
                progress(start + len(piece))
        except (BrokenPipeError, ValueError, OSError):
            pass  # the command stopped reading: its exit code (or the kill) says why
        finally:
            with contextlib.suppress(OSError, ValueError):
                pipe.close()

    writer = threading.Thread(target=feed, name="tpuwizard-fed-pipe", daemon=True)
    writer.start()
    out, err = proc.communicate(timeout=timeout)
    writer.join()
    return out, err
