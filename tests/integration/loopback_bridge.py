"""Carry TCP connections between two network namespaces through a Unix socket on disk.

Inside ``unshare -n`` loopback is the namespace's own, so a test's sshd outside cannot be reached
there; both sides share the filesystem, though. ``tcp:HOST:PORT unix:PATH`` listens on loopback
and forwards each connection to the Unix socket; ``unix:PATH tcp:HOST:PORT`` the other way. Only
the standard library, so any interpreter can run the file by its path.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading


def listener(spec: str) -> socket.socket:
    kind, _, where = spec.partition(":")
    if kind == "unix":
        server = socket.socket(socket.AF_UNIX)
        if os.path.exists(where):
            os.unlink(where)
        server.bind(where)
    else:
        host, _, port = where.rpartition(":")
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, int(port)))
    server.listen(8)
    return server


def connect(spec: str) -> socket.socket:
    kind, _, where = spec.partition(":")
    if kind == "unix":
        client = socket.socket(socket.AF_UNIX)
        client.connect(where)
        return client
    host, _, port = where.rpartition(":")
    return socket.create_connection((host, int(port)), timeout=10)


def pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)


def serve(server: socket.socket, target: str) -> None:
    """Forward every connection ``server`` accepts to ``target``, until ``server`` closes."""
    while True:
        try:
            accepted, _ = server.accept()
        except OSError:
            return
        try:
            outgoing = connect(target)
        except OSError:
            accepted.close()
            continue
        outgoing.settimeout(None)
        for a, b in ((accepted, outgoing), (outgoing, accepted)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    serve(listener(sys.argv[1]), sys.argv[2])
