"""Every way one of the on-VM watchdog's calls can fail is one failed attempt, never its end.

A practice hand-over shuts the connections of the sandbox that is ending, calls in flight among
them (a look cut there was seen: "Connection reset by peer"); an answer cut after its headers
raised http.client.IncompleteRead, which no ``except`` caught: the watchdog died, and nothing
deleted the node at its deadline. A load balancer can cut an answer on Google too. Each row: a
server that answers every call that way; each call returns "not done" and says why."""

from __future__ import annotations

import socket
import threading
from argparse import Namespace
from collections.abc import Iterator

import pytest
from tpuwizard_verify import tpu_watchdog

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
CUTS = {  # what the server sends before it closes the connection; the error it must give
    "cut after the headers": (HEADERS + b'{"na', "IncompleteRead"),
    "a status line that is not HTTP": (b"garbage\r\n\r\n", "BadStatusLine"),
    "nothing at all": (b"", "Remote end closed connection"),
    "a body that is not JSON": (HEADERS.replace(b"100", b"3") + b"{{{", "Expecting"),
}


@pytest.fixture
def cutting_server() -> Iterator[tuple[list[bytes], str]]:
    """A server on 127.0.0.1 that reads each request and answers ``answer[0]``, then closes."""
    answer = [b""]
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(65536)
                connection.sendall(answer[0])
                connection.shutdown(socket.SHUT_RDWR)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield answer, f"http://127.0.0.1:{listener.getsockname()[1]}"
    done.set()
    thread.join(5)
    listener.close()


def _args(endpoint: str) -> Namespace:
    return Namespace(
        endpoint=endpoint,
        iam_endpoint=endpoint,
        resource="projects/p/locations/us-central1-a/nodes/n",
        token="none",
        last_answer=0.0,
        retry=0.05,
        deadline=None,
        give_up_after=0.0,
        give_up_before_deadline=False,
        check_only=True,
    )


@pytest.mark.parametrize("cut", list(CUTS))
def test_a_call_cut_short_is_a_failed_attempt_said_not_the_end_of_the_watchdog(
    cutting_server, capsys, cut
):
    answer, endpoint = cutting_server
    answer[0], error = CUTS[cut]
    args = _args(endpoint)
    assert tpu_watchdog.already_gone(args) is False  # the look while it waits
    assert tpu_watchdog.delete_resource(args) is False  # the delete at the deadline
    assert tpu_watchdog.gone(args) is False  # the read-back after the delete
    assert tpu_watchdog.checked(args) is None  # the check before it is armed
    said = capsys.readouterr().out.splitlines()
    actions = [line for line in said if line.startswith(tpu_watchdog.MARKER)]
    assert len(actions) == 4 and all(error in line for line in actions), said


def test_a_look_that_keeps_failing_the_same_way_is_said_once_and_its_end_once(capsys):
    # A refused token or an API gone quiet shows when it starts and ends, not at every look.
    args = Namespace()
    for error in ["HTTP 401", "HTTP 401", "HTTP 401", None, None, "refused", None]:
        tpu_watchdog.note_look(args, error)
    said = [line for line in capsys.readouterr().out.splitlines() if '"look"' in line]
    assert len(said) == 4
    assert ['"HTTP 401"' in said[0], '"answered"' in said[1], '"refused"' in said[2]] == [True] * 3
