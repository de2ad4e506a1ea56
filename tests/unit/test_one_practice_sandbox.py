"""One practice sandbox per command, whichever asks first: a kept node's lasting one, or a cloud
opened on a thread at the same moment (the price read `up` starts, a wizard heartbeat).

Two of them in one process was why the CI's `up` had its watchdog refused with 401 (the node and
its client in one sandbox, the watchdog's token from the other) or never deleting at the idle
limit (the watchdog calling the in-process one, which ended with `up`). The sandboxes are stand-ins
here: what is proven is the order of the decision, which needs no server."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from tests.waiting import wait_until
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, TOKEN_ENV
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.session.practice import sandbox as practice_sandbox
from tpuwizard.session.session import Session


class ObservedLock:
    """A lock that tells which threads asked for it, so a test waits on that, not on time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.asked_by: list[str] = []

    def __enter__(self) -> bool:
        self.asked_by.append(threading.current_thread().name)
        return self._lock.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._lock.__exit__(*exc)


@pytest.fixture
def sandboxes(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[list[str], threading.Event, threading.Event]:
    """(which sandboxes started, in order; set once the in-process start has begun; set to let
    it finish). The in-process start exports its address as the real one does."""
    started: list[str] = []
    entered, release = threading.Event(), threading.Event()

    def in_process() -> None:
        entered.set()
        assert release.wait(30), "the test never let the in-process sandbox finish starting"
        started.append("in-process")
        os.environ[ENDPOINT_ENV] = "http://127.0.0.1:9"  # nothing is called there
        os.environ[TOKEN_ENV] = "in-process-token"

    def lasting() -> None:
        started.append("lasting")
        os.environ[ENDPOINT_ENV] = "http://127.0.0.1:9"
        os.environ[TOKEN_ENV] = "lasting-token"

    monkeypatch.setattr(practice_sandbox, "start_sandbox", in_process)
    monkeypatch.setattr(practice_sandbox, "start_lasting_sandbox", lasting)
    return started, entered, release


def test_a_keep_asked_while_a_thread_opens_the_cloud_starts_no_second_sandbox(sandboxes):
    started, entered, release = sandboxes
    session = Session(True)
    lock = ObservedLock()
    session._sandbox_lock = lock  # type: ignore[assignment]
    opener = threading.Thread(target=lambda: session.cloud, name="price-read")
    opener.start()
    assert entered.wait(30)  # the thread is starting the in-process sandbox now
    keeper = threading.Thread(target=session.prepare_to_keep, name="keep")
    keeper.start()
    # The keep either waits for the opening under the same lock (right) or decides alone.
    wait_until(lambda: "keep" in lock.asked_by or not keeper.is_alive(), 30, "the keep's choice")
    release.set()
    keeper.join(30)
    opener.join(30)
    # One sandbox: the one already starting serves the node (and is handed over at the end).
    assert started == ["in-process"]
    assert os.environ[TOKEN_ENV] == "in-process-token"


def test_a_keep_asked_first_starts_the_lasting_sandbox_and_no_other(sandboxes):
    started, _, release = sandboxes
    release.set()
    session = Session(True)
    session.prepare_to_keep()
    session.cloud  # noqa: B018 (opening the cloud after the keep: it uses the lasting one)
    assert started == ["lasting"]


class PriceReadStarted(Exception):
    """Raised by the stand-in prices where the real ones would start their read on a thread."""


def test_a_kept_launchs_lasting_sandbox_starts_before_its_price_read(sandboxes, tmp_path):
    # `up` and `launch --keep`: the price read opens the cloud on a thread; the kept node's
    # sandbox is started before it, so the node never lives in one that ends with the command.
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.parts import Where
    from tpuwizard.core.plan.catalog import parse_accelerator

    started, _, release = sandboxes
    release.set()

    class Prices:
        def start(self) -> object:
            started.append("price read")
            raise PriceReadStarted

        def wait(self, wait_s: float) -> None:
            raise AssertionError("no --budget was asked")

    session = Session(True, runs=tmp_path / "runs")
    asked = LaunchAnswers(
        Where(parse_accelerator("v5litepod-1"), "us-central1-a"), deadline=Deadline(keep=True)
    )
    with pytest.raises(PriceReadStarted):
        session.prepare(asked, preflight=False, prices=Prices())
    assert started == ["lasting", "price read"]
