"""A stopped sandbox server ends the connections its clients kept open, as the end of its
process would: otherwise each held a thread and a socket of the process for the client's life
(a test worker reached 1,700 sockets, past what select() can watch). A dropped cloud closes its
own at once, and a server a test left serving stops at the test's end."""

from __future__ import annotations

import gc
import http.client
import threading

import pytest

from tests.conftest import stop_left_serving
from tests.waiting import wait_until
from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.sandbox.kaggle.server import start_kaggle_stand_in
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import served_in_threads, start_in_thread


def test_stopping_the_server_ends_the_connections_clients_kept_open(tmp_path):
    server = make_server(tmp_path / "sandbox", delay=0)
    start_in_thread(server)
    assert server in served_in_threads()
    before = set(threading.enumerate())
    client = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    client.request("GET", "/v2/projects/p/locations")
    client.getresponse().read()  # HTTP/1.1: the connection stays open for the next request
    handlers = [t for t in set(threading.enumerate()) - before if t.name.startswith("Thread-")]
    assert len(handlers) == 1  # the one waiting for this client's next request
    server.shutdown()
    server.server_close()
    assert client.sock is not None and client.sock.recv(1) == b""  # the server's end, not a hang
    handlers[0].join(timeout=60)
    assert not handlers[0].is_alive()
    client.close()


def test_a_hand_over_lets_the_answer_in_flight_finish_before_it_closes(tmp_path):
    # Most wizard hand-overs under load reset a watchdog's look ("Connection reset by peer", 5
    # of 9); an answer cut after its headers ended the watchdog (IncompleteRead) until it
    # retried any failed call. The slow answer here is one being written when the hand-over
    # comes (latency_ms holds it 1.5 s: longer than a stop takes to end the serving loop).
    import time

    server = make_server(tmp_path / "sandbox", delay=0, faults="latency_ms=1500")
    start_in_thread(server)
    answers: list[object] = []

    def look() -> None:
        client = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
        try:
            client.request("GET", "/v2/projects/p/locations/us-central1-a/nodes/n")
            response = client.getresponse()
            answers.append((response.status, response.read()[:1]))
        except (OSError, http.client.HTTPException) as err:
            answers.append(err)
        finally:
            client.close()

    caller = threading.Thread(target=look)
    caller.start()
    while not server.answering.count:  # the look is being answered
        time.sleep(0.01)
    server.stop_after_answers()
    caller.join(timeout=30)
    assert answers == [(404, b"{")]  # the whole answer: the sandbox holds no such node


def _handlers() -> set[threading.Thread]:
    """The server's threads that each wait on one client's kept-open connection."""
    return {t for t in threading.enumerate() if t.name.endswith("(process_request_thread)")}


@pytest.mark.parametrize("make_cloud", [TpuCloud, ComputeCloud], ids=["tpu", "compute"])
def test_a_dropped_cloud_closes_its_connections_without_a_collection(tmp_path, make_cloud):
    """No cycle keeps a cloud object: dropped, its HTTP connections close at once (a cycle held
    each one's socket until the next full collection, which costs ~0.3 s in a test worker)."""
    server = make_server(tmp_path / "sandbox", delay=0)
    start_in_thread(server)
    before = _handlers()
    gc.disable()
    try:
        cloud = make_cloud("practice-project", endpoint=server.endpoint)
        assert cloud.list_zones()
        kept_open = _handlers() - before
        assert kept_open  # HTTP/1.1: the client keeps its connection for the next call
        del cloud
        wait_until(lambda: not any(t.is_alive() for t in kept_open), 60, "the clients' closes")
    finally:
        gc.enable()
        server.shutdown()
        server.server_close()


def test_a_server_a_test_left_serving_is_stopped_at_its_end_and_an_earlier_one_is_not(tmp_path):
    """The tests' teardown (tests/conftest.py): a sandbox the test started stops serving, a
    Kaggle stand-in with its kernels; one started before the test is left to its own end."""
    earlier, left = make_server(tmp_path / "earlier", delay=0), make_server(tmp_path / "left")
    earlier_thread, left_thread = start_in_thread(earlier), start_in_thread(left)
    serving = {t for t in threading.enumerate() if t.name == "tpuwizard-sandbox"}
    kaggle = start_kaggle_stand_in(tmp_path / "kaggle")
    [kaggle_thread] = {t for t in threading.enumerate() if t.name == "tpuwizard-sandbox"} - serving
    stop_left_serving({id(earlier)})
    assert kaggle.switched_off.is_set()
    for stopped in (left_thread, kaggle_thread):
        stopped.join(timeout=60)
        assert not stopped.is_alive()
    assert earlier_thread.is_alive()
    earlier.shutdown()
    earlier.server_close()
