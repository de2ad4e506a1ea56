"""Whether a call that failed on the network may have reached Google.

A create whose every attempt failed before a connection was made (the connection refused, a
name that did not resolve, a connect timeout) was never sent: nothing can exist. One that failed
after its request went out (a read timeout, the connection reset or closed before the answer)
may have been carried out: it "may exist" until a get or a list says otherwise. The REST clients
raise ``requests``' exceptions wrapping urllib3's (google-auth's transport passes them through,
or wraps them in its own TransportError): their chain is read here, no Google import.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

# urllib3's and requests' names for "no connection was made" (NewConnectionError covers refused
# and unreachable, NameResolutionError a DNS failure, ConnectTimeoutError a connect timeout).
_NOT_SENT_NAMES = frozenset(
    {"NewConnectionError", "NameResolutionError", "ConnectTimeoutError", "ConnectTimeout"}
)
# ...and for "it went out, then the answer did not come".
_SENT_NAMES = frozenset(
    {
        "ReadTimeout",
        "ReadTimeoutError",
        "ProtocolError",
        "RemoteDisconnected",
        "ConnectionResetError",
        "BrokenPipeError",
        "ChunkedEncodingError",
    }
)


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err``, its causes and contexts, and exceptions carried in their args or ``reason``."""
    seen: set[int] = set()
    todo = [err]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        nested = [e.__cause__, e.__context__, getattr(e, "reason", None), *e.args]
        todo.extend(x for x in nested if isinstance(x, BaseException))


def network_failure(err: BaseException) -> bool:
    """Did ``err`` come from the network (not an answer of Google's)?"""
    return any(
        type(e).__name__ in _NOT_SENT_NAMES | _SENT_NAMES
        or isinstance(e, ConnectionError | socket.gaierror | socket.timeout)
        or type(e).__name__ in ("ConnectionError", "TransportError")
        for e in _chain(err)
    )


def never_sent(err: BaseException) -> bool:
    """No connection was made: the request cannot have reached Google."""
    chain = list(_chain(err))
    if any(type(e).__name__ in _SENT_NAMES for e in chain):
        return False
    return any(
        type(e).__name__ in _NOT_SENT_NAMES
        or isinstance(e, ConnectionRefusedError | socket.gaierror)
        for e in chain
    )
