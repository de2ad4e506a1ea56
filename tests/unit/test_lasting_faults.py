"""Faults asked for while a lasting practice sandbox serves: said, never silently dropped."""

import json
import socket
import subprocess
import sys

import pytest

from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, TOKEN_ENV
from tpuwizard.core.errors import BadInput
from tpuwizard.session import practice


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


def test_the_same_faults_or_none_attach_as_before(lasting, monkeypatch):
    lasting("create:stockout")
    monkeypatch.setenv(practice.FAULTS_ENV, "create:stockout")
    assert practice.attach_lasting_sandbox()
    monkeypatch.delenv(practice.FAULTS_ENV)
    assert practice.attach_lasting_sandbox()
