"""A closed session opens no cloud: a thread it left running (a price read, a heartbeat, a
preflight worker) starts no practice sandbox after it and never exports one's address into the
environment (in the tests' one process, into a later test: tests/thread_env.py fails that)."""

from __future__ import annotations

import os
import threading

import pytest

from tests import thread_env
from tests.waiting import wait_until
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV
from tpuwizard.session.clouds import CloudBook
from tpuwizard.session.session import Session


def test_a_closed_practice_session_starts_no_sandbox_and_exports_nothing():
    session = Session(practice=True, project="tpuwizard-practice")
    session.close()
    with pytest.raises(LookupError, match="the session has ended"):
        session.cloud_for("tpu-api")
    assert ENDPOINT_ENV not in os.environ
    assert session._sandbox_server is None


def test_a_cloud_opened_before_close_is_still_served():
    opened: list[str] = []
    book = CloudBook(lambda backend: opened.append(backend) or object())  # type: ignore[arg-type,func-returns-value]
    cloud = book.get("tpu-api")
    book.close()
    assert book.get("tpu-api") is cloud and opened == ["tpu-api"]
    with pytest.raises(LookupError):
        book.get("compute")


def test_close_waits_for_a_cloud_that_is_opening():
    started, release = threading.Event(), threading.Event()

    def open_cloud(backend: str) -> object:
        started.set()
        release.wait(60)
        return object()

    book = CloudBook(open_cloud)  # type: ignore[arg-type]
    opener = threading.Thread(target=book.get, args=("tpu-api",))
    opener.start()
    assert started.wait(60)
    closer = threading.Thread(target=book.close)
    closer.start()
    assert closer.is_alive()  # the opening ends first: its sandbox is the one handed over
    release.set()
    closer.join(60)
    opener.join(60)
    assert not closer.is_alive() and book.opened


def test_the_guard_names_a_thread_another_test_left_writing_the_environment(request):
    def later_export() -> None:
        wait_until(lambda: thread_env._current[0] == "the later test", 30, "the later test")
        os.environ["TPUWIZARD_GUARD_PROBE"] = "1"

    thread_env.begin("the earlier test")
    leaked = threading.Thread(target=later_export, name="leaky-export")
    leaked.start()
    thread_env.end()
    thread_env.begin("the later test")
    leaked.join(60)
    found = thread_env.end()
    thread_env.begin(request.node.nodeid)  # this test's own again, for its fixture's check
    os.environ.pop("TPUWIZARD_GUARD_PROBE", None)
    assert found == [
        "os.environ['TPUWIZARD_GUARD_PROBE'] written during the later test by thread "
        "'leaky-export', which the earlier test started and left running"
    ]
