"""Faults asked for while a lasting practice sandbox serves: said, never silently dropped."""

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from tests.waiting import wait_until
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, TOKEN_ENV
from tpuwizard.core.errors import BadInput
from tpuwizard.session.practice import sandbox as practice
from tpuwizard.session.practice.lasting_faults import FAULTS_REQUEST, take_request


@pytest.fixture
def lasting(home, monkeypatch):
    """A server.json naming a live process and a listening loopback port, as `up` leaves."""
    monkeypatch.setenv(ENDPOINT_ENV, "")
    monkeypatch.setenv(TOKEN_ENV, "")
    listener = socket.create_server(("127.0.0.1", 0))
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    folder = home / "sandbox"
    folder.mkdir(parents=True)

    def serving(faults: str) -> None:
        port = listener.getsockname()[1]
        info = {"endpoint": f"http://127.0.0.1:{port}", "pid": alive.pid, "token": "t"}
        (folder / practice.LASTING_SERVER_FILE).write_text(json.dumps({**info, "faults": faults}))

    yield serving
    alive.kill()
    alive.wait()
    listener.close()


def test_faults_the_lasting_sandbox_does_not_serve_are_refused_with_the_way_out(
    lasting, monkeypatch
):
    lasting("")
    monkeypatch.setenv(practice.FAULTS_ENV, "create:stockout")
    with pytest.raises(BadInput) as refused:
        practice.attach_lasting_sandbox()
    said = str(refused.value)
    assert "TPUWIZARD_SANDBOX_FAULTS='create:stockout' cannot apply" in said
    assert "started with no faults" in said and "tpuwizard down --sandbox --all" in said


def test_the_same_faults_attach_as_before(lasting, monkeypatch):
    lasting("create:stockout")
    monkeypatch.setenv(practice.FAULTS_ENV, "create:stockout")
    assert practice.attach_lasting_sandbox()


def test_a_command_asking_for_none_ends_a_rehearsals_faults_before_its_first_call(
    lasting, home, monkeypatch
):
    """Faults are the rehearsal's: the next command that asks for none gets none (they stayed,
    slow_create=30 minutes later). It waits until the sandbox says it serves none."""
    lasting("slow_create=30")
    monkeypatch.delenv(practice.FAULTS_ENV, raising=False)
    folder = home / "sandbox"
    taken: list[str | None] = []

    def sandbox_loop() -> None:  # what practice/lasting.py's loop does with the request
        wait_until(lambda: (folder / FAULTS_REQUEST).exists(), 60, "the faults request")
        taken.append(take_request(folder))
        info = folder / practice.LASTING_SERVER_FILE
        # Whole or not at all, as the sandbox writes it: the attach reads it meanwhile, and a
        # half-written file (a slow write on a loaded machine) would read as no sandbox.
        part = info.with_suffix(".part")
        part.write_text(json.dumps({**json.loads(info.read_text()), "faults": taken[-1]}))
        os.replace(part, info)

    loop = threading.Thread(target=sandbox_loop, daemon=True)
    loop.start()
    assert practice.attach_lasting_sandbox()
    loop.join(30)
    assert taken == [""]
