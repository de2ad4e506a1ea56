"""Practice mode's own safety (issue 17, item 16): the sandbox answers only its token's bearer,
workers get none of this computer's credentials, and the watchdog stops once its node is gone."""

from __future__ import annotations

import threading
import time

import pytest
from google.api_core import exceptions as gx
from google.auth import exceptions as auth_exc
from tpuwizard_verify import tpu_watchdog

from tests.waiting import wait_until
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread
from tpuwizard.words.choice_words import all_words

ZONE = "us-central1-a"


@pytest.fixture
def guarded(tmp_path):
    server = make_server(tmp_path / "sandbox", delay=0.0, token="s3cret-token")
    start_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()


def test_the_sandbox_refuses_requests_without_its_token(guarded, monkeypatch):
    # A 401 makes google-auth try to refresh, which static and anonymous credentials cannot.
    refused = (gx.Unauthorized, auth_exc.GoogleAuthError)
    monkeypatch.delenv("TPUWIZARD_SANDBOX_TOKEN", raising=False)
    with pytest.raises(refused):
        TpuCloud("practice-project", endpoint=guarded.endpoint, retry_deadline=1).list_zones()
    monkeypatch.setenv("TPUWIZARD_SANDBOX_TOKEN", "wrong")
    with pytest.raises(refused) as caught:
        TpuCloud("practice-project", endpoint=guarded.endpoint, retry_deadline=1).list_zones()
    d = diagnose(caught.value)
    assert d.kind == "unauthenticated" and "TPUWIZARD_SANDBOX_TOKEN" in " ".join(
        all_words(d.next_steps, "cli")
    )
    monkeypatch.setenv("TPUWIZARD_SANDBOX_TOKEN", "s3cret-token")
    assert ZONE in TpuCloud("practice-project", endpoint=guarded.endpoint).list_zones()


def test_worker_jobs_get_no_credential_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_TOKEN", "s3cret-token")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/home/me/key.json")
    monkeypatch.setenv("CLOUDSDK_AUTH_ACCESS_TOKEN", "ya29.x")
    monkeypatch.setenv("SOME_API_KEY", "k")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    home = tmp_path / "w0"
    home.mkdir()
    result = LocalTransport([home]).run(0, "env")
    assert "HARMLESS_SETTING=kept" in result.stdout
    for secret in ("s3cret-token", "key.json", "ya29.x", "SOME_API_KEY"):
        assert secret not in result.stdout


def test_the_watchdog_reads_its_token_from_a_file_and_stops_once_its_node_is_gone(
    guarded, tmp_path, monkeypatch
):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_TOKEN", "s3cret-token")
    cloud = TpuCloud("practice-project", endpoint=guarded.endpoint)
    cloud.wait_for_node(
        ZONE, "n", cloud.create_node(NodeRequest(ZONE, "n", parse_accelerator("v5litepod-1"), "r"))
    )
    token_file = tmp_path / "metadata-token"
    token_file.write_text("s3cret-token\n")
    args = [
        "--resource",
        cloud.node_path(ZONE, "n"),
        "--endpoint",
        guarded.endpoint,
        "--iam-endpoint",
        guarded.endpoint,
        "--token",
        f"file:{token_file}",
        "--retry",
        "0.05",
        "--deadline",
        str(time.time() + 600),
    ]
    codes: list[int] = []
    watchdog = threading.Thread(target=lambda: codes.append(tpu_watchdog.main(args)), daemon=True)
    watchdog.start()
    cloud.delete_node(ZONE, "n")
    watchdog.join(timeout=60)
    assert not watchdog.is_alive(), "the watchdog kept waiting for a node that is gone"
    assert codes == [0]


def test_two_sandboxes_sharing_a_home_never_bring_a_deleted_node_back(tmp_path):
    first = make_server(tmp_path / "sandbox", delay=0.0)
    second = make_server(tmp_path / "sandbox", delay=0.0)
    for server in (first, second):
        start_in_thread(server)
    try:
        a = TpuCloud("practice-project", endpoint=first.endpoint)
        b = TpuCloud("practice-project", endpoint=second.endpoint)
        a.wait_for_node(
            ZONE, "n", a.create_node(NodeRequest(ZONE, "n", parse_accelerator("v5litepod-1"), "r"))
        )
        assert b.get_node(ZONE, "n") is not None, "the second server sees the first's node"
        b.delete_node(ZONE, "n")
        a.create_node(
            NodeRequest(ZONE, "other", parse_accelerator("v5litepod-1"), "r")
        )  # the first one writes
        for cloud in (a, b):
            assert cloud.get_node(ZONE, "n") is None, "a deleted node came back"
            assert [n.name for n in cloud.list_nodes(ZONE)] == ["other"]
    finally:
        for server in (first, second):
            server.shutdown()
            server.server_close()


def test_first_launches_racing_on_the_ssh_key_agree_on_one(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from tpuwizard.core.remote.ssh_keys import ensure_key

    with ThreadPoolExecutor(6) as pool:
        keys = set(pool.map(lambda _: ensure_key(tmp_path)[1], range(6)))
    assert len(keys) == 1 and next(iter(keys)).startswith("ssh-ed25519 ")
    assert sorted(p.name for p in (tmp_path / "ssh").iterdir()) == [
        "id_ed25519",
        "id_ed25519.pub",
        "keygen.lock",
    ]


def test_one_served_sandbox_runs_launches_from_two_homes(tmp_path):
    """Worker folders belong to the server's home: a client with another home still runs."""
    import json
    import signal
    import subprocess

    from tests.conftest import clean_env, tpuwizard_cmd

    server_home, client_home = tmp_path / "server-home", tmp_path / "client-home"
    serve = subprocess.Popen(
        tpuwizard_cmd("sandbox", "serve", "--delay", "0.2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=clean_env(TPUWIZARD_HOME=str(server_home)),
    )
    try:
        exported = dict(serve.stdout.readline().strip().split("=", 1) for _ in range(2))
        proc = subprocess.run(
            tpuwizard_cmd("launch", "--accelerator", "v5litepod-1", "--zone", ZONE, "--json"),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
            env=clean_env(TPUWIZARD_HOME=str(client_home), **exported),
        )
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=60)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0, proc.stderr
    assert any(e["event"] == "receipt_saved" and e["ok"] for e in events)
    assert not (client_home / "sandbox" / "workers").exists()
    assert (server_home / "sandbox" / "workers").is_dir()


# Started before the server, so its imports are done when the server appears: it attaches the
# moment the server's info is written, not a loaded machine's Python start later (by then the
# server had lingered out and it found nothing to attach to).
ATTACH_LINGER_THEN_CALL = """
import os, sys, time
from tpuwizard.session.practice import sandbox as practice
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.plan.catalog import parse_accelerator
deadline = time.monotonic() + 60
while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
    time.sleep(0.01)
assert practice.attach_lasting_sandbox(), "no lasting sandbox to attach to"
time.sleep(float(sys.argv[1]))  # longer than the server lingers with nothing in it
print(len(TpuCloud(practice.PRACTICE_PROJECT).list_zones()))
"""


def test_a_command_attached_to_the_lasting_sandbox_keeps_it_until_it_ends(home):
    """Issue 22, item 15: a command that attached just as the server lingered out failed with
    "Cannot reach the Cloud TPU API ... ConnectionResetError". Attaching and lingering out now
    exclude each other: the server stays while a command holds it, and ends after."""
    import json
    import subprocess
    import sys

    from tests.conftest import clean_env

    environment = clean_env(TPUWIZARD_SANDBOX_LINGER="1")
    info = home / "sandbox" / "server.json"
    client = subprocess.Popen(
        [sys.executable, "-c", ATTACH_LINGER_THEN_CALL, "3", str(info)],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "tpuwizard.session.practice.lasting"],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(info.exists, 30, "the sandbox's server.json")
        assert json.loads(info.read_text())["pid"] == server.pid
        out, err = client.communicate(timeout=120)
        assert client.returncode == 0, err
        assert int(out) > 0
        # Nobody holds it now: it lingers out by itself, and takes its server.json with it.
        assert server.wait(timeout=30) == 0
        assert not info.exists()
    finally:
        for process in (client, server):
            if process.poll() is None:
                process.kill()
                process.wait()


def _group_alive(pgid: int) -> bool:
    """Is any process of group ``pgid`` still running (a zombie has ended)?"""
    from pathlib import Path

    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_a_stopped_sandbox_serve_ends_its_nodes_watchdogs(home, stop):
    """Issue 22, item 15: its nodes' watchdogs ran on for their whole deadline, then retried a
    server that was gone for ever. The VMs stop with the practice cloud now."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from google.oauth2.credentials import Credentials

    from tests.conftest import clean_env, tpuwizard_cmd
    from tpuwizard.core.remote.jobs import Job, start_job
    from tpuwizard.core.remote.transports import shell

    serve = subprocess.Popen(
        tpuwizard_cmd("sandbox", "serve", "--delay", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        exported = dict(serve.stdout.readline().strip().split("=", 1) for _ in range(2))  # type: ignore[union-attr]
        endpoint, token = exported["TPUWIZARD_TPU_ENDPOINT"], exported["TPUWIZARD_SANDBOX_TOKEN"]
        cloud = TpuCloud("practice-project", endpoint=endpoint, credentials=Credentials(token))
        request = NodeRequest(ZONE, "n", parse_accelerator("v5litepod-1"), "r")
        cloud.wait_for_node(ZONE, "n", cloud.create_node(request), poll=0.05)
        worker = home / "sandbox" / "workers" / "practice-project" / ZONE / "n" / "w0"
        (worker / "token").write_text(token)
        watchdog = Path(tpu_watchdog.__file__)
        arguments = ["--resource", cloud.node_path(ZONE, "n"), "--endpoint", endpoint]
        arguments += ["--iam-endpoint", endpoint, "--token", f"file:{worker / 'token'}"]
        arguments += ["--retry", "0.1", "--deadline", str(time.time() + 7200)]
        job = Job("watchdog-r")
        start_job(
            LocalTransport([worker]), 0, job, shell(sys.executable, str(watchdog), *arguments)
        )
        pgid = int((worker / job.folder / "pid").read_text())
        wait_until(lambda: "armed" in (worker / job.log).read_text(), 30, "the watchdog armed")
        serve.send_signal(getattr(signal, stop))
        serve.wait(timeout=30)
        # The sandbox's end SIGKILLs the watchdog's group and exits without waiting for the
        # kernel to finish it: under load it ends a moment later (one that outlives the sandbox
        # runs for hours, its deadline).
        wait_until(lambda: not _group_alive(pgid), 60, "the watchdog to end with the sandbox")
        assert serve.returncode == 0 and "ended with it" in serve.stderr.read()  # type: ignore[union-attr]
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
