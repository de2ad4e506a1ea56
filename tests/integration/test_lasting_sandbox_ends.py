"""A lasting practice sandbox (one that outlives its command) ends with `down --sandbox --all`,
as its own refusal of a rehearsal's faults says it does; that refusal no longer claims it holds
a kept node (it may hold nothing, lingering)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import env
from tests.waiting import wait_until
from tpuwizard.core.errors import BadInput
from tpuwizard.session.practice import sandbox as practice

START = "from tpuwizard.session.practice import sandbox; sandbox.start_lasting_sandbox()"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A child of ours that ended is a zombie until reaped: it counts as ended.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_down_all_ends_the_lasting_sandbox(tmp_path):
    environ = env(TPUWIZARD_HOME=str(tmp_path / "state"), TPUWIZARD_SANDBOX_LINGER="600")
    subprocess.run([sys.executable, "-c", START], env=environ, check=True, timeout=60)
    info = tmp_path / "state" / "sandbox" / practice.LASTING_SERVER_FILE
    pid = int(json.loads(info.read_text())["pid"])
    assert alive(pid)  # it holds nothing, and would linger for 10 minutes
    try:
        done = subprocess.run(
            tpuwizard_cmd("down", "--sandbox", "--all", "--yes"),
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "The lasting practice sandbox has ended" in done.stdout + done.stderr
        wait_until(lambda: not alive(pid), 30, "the lasting sandbox's end")
        assert not info.exists()
    finally:
        if alive(pid):
            os.kill(pid, 9)


def test_the_faults_refusal_claims_no_kept_node(monkeypatch):
    monkeypatch.setenv(practice.FAULTS_ENV, "lost_create=1")
    with pytest.raises(BadInput) as refused:
        practice._refuse_faults_it_does_not_serve("slow_create=30")
    words = " ".join(str(refused.value).split())
    assert "it holds a kept node" not in words
    assert "tpuwizard down --sandbox --all" in words


ONE_CALL = """
import json, os, time, urllib.request
from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV, TOKEN_ENV
from tpuwizard.session.practice import sandbox as practice
assert practice.attach_lasting_sandbox()
url = os.environ[ENDPOINT_ENV] + "/v2/projects/tpuwizard-practice/locations/us-central1-a/nodes"
request = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ[TOKEN_ENV]})
start = time.monotonic()
urllib.request.urlopen(request, timeout=60).read()
print(json.dumps({"seconds": time.monotonic() - start}))
"""


def test_a_rehearsals_faults_end_with_it(tmp_path):
    """A lasting sandbox started by a rehearsal (every request 5 s late): the next command that
    asks for no faults is served without them."""
    home = tmp_path / "state"
    environ = env(TPUWIZARD_HOME=str(home), TPUWIZARD_SANDBOX_LINGER="600")
    rehearsal = {**environ, practice.FAULTS_ENV: "latency_ms=5000"}
    subprocess.run([sys.executable, "-c", START], env=rehearsal, check=True, timeout=60)
    info = home / "sandbox" / practice.LASTING_SERVER_FILE
    pid = int(json.loads(info.read_text())["pid"])
    try:
        assert json.loads(info.read_text())["faults"] == "latency_ms=5000"
        done = subprocess.run(
            [sys.executable, "-c", ONE_CALL],
            env=environ,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1])["seconds"] < 4
        assert json.loads(info.read_text())["faults"] == ""
    finally:
        if alive(pid):
            os.kill(pid, 9)
