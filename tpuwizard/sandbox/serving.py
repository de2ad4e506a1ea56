"""How a sandbox server runs in a process: from a daemon thread, and with the connections it
has open ended when it stops, as a process's end would end them.

Clients keep HTTP/1.1 connections open between requests; without this, each one held a thread
and a socket of the process for as long as the client lived, after the server had stopped.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import weakref
from collections.abc import Iterator
from typing import Any, Protocol


class Server(Protocol):
    def serve_forever(self, poll_interval: float = 0.5) -> None: ...


class OpenConnections:
    """The connections a server has accepted and not yet closed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[Any] = set()

    def opened(self, connection: Any) -> None:
        with self._lock:
            self._open.add(connection)

    def closed(self, connection: Any) -> None:
        with self._lock:
            self._open.discard(connection)

    def end_all(self) -> None:
        """Shut every open connection: a handler waiting for its client's next request reads
        the end, finishes, and closes it."""
        with self._lock:
            still, self._open = self._open, set()
        for connection in still:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class Answering:
    """How many requests a server is answering now (not the connections idle between
    requests), so that a stop can let those answers finish before it closes the connections."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._count = 0

    @contextlib.contextmanager
    def one(self) -> Iterator[None]:
        with self._changed:
            self._count += 1
        try:
            yield
        finally:
            with self._changed:
                self._count -= 1
                self._changed.notify_all()

    @property
    def count(self) -> int:
        with self._changed:
            return self._count

    def wait_until_none(self, timeout: float) -> bool:
        """True once no answer is being written; False when ``timeout`` came first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._count == 0, timeout)


# Weak: a server stopped and dropped is forgotten; a serving one is held by its thread.
_SERVED_IN_THREADS: weakref.WeakSet[Any] = weakref.WeakSet()


# How often a serving loop looks for a stop: shutdown() waits up to this long (the library's
# 0.5 s was half a second at the end of every practice run and every test's sandbox).
STOP_POLL_S = 0.05


def start_in_thread(server: Server) -> threading.Thread:
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": STOP_POLL_S},
        name="tpuwizard-sandbox",
        daemon=True,
    )
    thread.start()
    _SERVED_IN_THREADS.add(server)
    return thread


def served_in_threads() -> list[Any]:
    """The servers this process started with :func:`start_in_thread` and still holds (a test
    harness stops those a test left serving, as the end of the process would)."""
    return list(_SERVED_IN_THREADS)
