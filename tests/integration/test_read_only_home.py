"""A read-only TPUWIZARD_HOME (issue 56, item 8): `status` still lists what exists and `down`
still deletes it and verifies it gone, holding the ledger's record in a folder of this user's
alone under the temporary folder, and saying so; the first command whose disk takes the record
again moves it into the ledger.

The home is made read-only for the command's own process by a real read-only mount (a bind
mount remounted ``ro`` in a mount namespace of its own, ``unshare -rm``), which refuses writes
as root too, where ``chmod`` does not. Where this machine allows no such namespace, the test is
skipped: there is no other way to show it. The practice cloud is a `sandbox serve` outside the
home (a read-only home cannot hold the practice sandbox's own state)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import up
from tests.integration.launch_helpers import env, ledger_all_gone
from tests.waiting import wait_until
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread
from tpuwizard.session.login import PRACTICE_ACCOUNT

pytestmark = pytest.mark.rotating("kept-node-e2e")

TOKEN = "read-only-home-token"
# Run the command with $1 mounted read-only: its own mount namespace, nothing else changes.
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def read_only_mounts() -> bool:
    """This machine lets a process mount a folder read-only in a namespace of its own."""
    if shutil.which("unshare") is None:
        return False
    probe = Path(__file__).parent  # any folder: the mount is gone with the namespace
    try:
        proc = subprocess.run(
            ["unshare", "-rm", "sh", "-c", READ_ONLY, "sh", str(probe), "true"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def serve(tmp_path: Path, **options) -> Iterator[dict[str, str]]:
    """A practice cloud outside the home, as `sandbox serve` gives one (``options``: its
    faults, its sshd); yields the commands' settings."""
    if not read_only_mounts():
        pytest.skip("this machine allows no read-only mount in a namespace of its own")
    server = make_server(tmp_path / "serve", delay=0.3, token=TOKEN, **options)
    start_in_thread(server)
    (tmp_path / "tmp").mkdir()
    yield {
        "TPUWIZARD_TPU_ENDPOINT": server.endpoint,
        "TPUWIZARD_SANDBOX_TOKEN": TOKEN,
        "TMPDIR": str(tmp_path / "tmp"),
    }
    server.shutdown()
    server.server_close()


@pytest.fixture
def served(tmp_path):
    yield from serve(tmp_path)


@pytest.fixture
def served_os_login(tmp_path, sshd):
    """The same, with OS Login on for the project and its VMs reached over a real sshd."""
    for settings in serve(
        tmp_path, faults="oslogin=1", authorized_keys=sshd.authorized_keys, ssh_port=sshd.port
    ):
        yield {**settings, "TPUWIZARD_SANDBOX_SSH_PORT": str(sshd.port)}


def cli_read_only(home: Path, cwd: Path, extra: dict[str, str], *args: str):
    """Run ``tpuwizard ARGS`` with ``home`` mounted read-only for it alone."""
    argv = ["unshare", "-rm", "sh", "-c", READ_ONLY, "sh", str(home), *tpuwizard_cmd(*args)]
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=240, env=env(**extra)
    )


def ledger_ops(home: Path) -> list[str]:
    lines = (home / "sandbox" / "ledger.jsonl").read_text().splitlines()
    return [json.loads(line)["op"] for line in lines if line.strip()]


def test_status_and_down_list_and_delete_from_a_read_only_home(tmp_path, home, served):
    kept = up(tmp_path, "--name", "ro1", **served)
    assert kept["name"] == "ro1"
    before = ledger_ops(home)

    shown = cli_read_only(home, tmp_path, served, "status", "--sandbox", "--json")
    assert shown.returncode == 0, shown.stderr
    assert [k["name"] for k in json.loads(shown.stdout)["kept"]] == ["ro1"]
    said = " ".join(shown.stderr.split())
    assert f"{home} is read-only" in said, said
    # The refused zone's note cannot be remembered in a read-only home: at most once a run,
    # never "Said once" (issue 56). A second run says it again, as its words promise.
    for run in (shown, cli_read_only(home, tmp_path, served, "status", "--sandbox")):
        said = " ".join(run.stderr.split())
        assert said.count("Not searched: europe-west1-b.") == 1, said  # the sandbox refuses it
        assert "Said once" not in said and "Not noted as said" in said, said

    down = cli_read_only(home, tmp_path, served, "down", "ro1", "--yes", "--sandbox")
    said = " ".join(down.stderr.split())
    assert down.returncode == 0, said
    assert "verified gone" in said and f"{home} is read-only" in said, said
    assert "could not record" in said and ".held" in said, said  # where its record waits
    assert ledger_ops(home) == before  # nothing written into the read-only home...
    held = list((tmp_path / "tmp").glob("tpuwizard-*/*.held"))
    assert held, said  # ...its record is held

    after = subprocess.run(  # writable again: the held record moves in, nothing is left
        tpuwizard_cmd("status", "--sandbox", "--json"),
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env(**served),
    )  # fmt: skip
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["kept"] == []
    assert ledger_ops(home)[-1] == "gone"


def profile_keys(tmp_path: Path) -> dict:
    """The practice OS Login API's keys in the profile (the served cloud's own state)."""
    state = json.loads((tmp_path / "serve" / "state.json").read_text())
    return state.get("oslogin", {}).get(PRACTICE_ACCOUNT, {})


def said(run: subprocess.CompletedProcess[str]) -> str:
    return " ".join(run.stderr.split())


def writable(tmp_path: Path, extra: dict[str, str], *args: str):
    """``tpuwizard ARGS`` with the home writable again: held records move in."""
    return subprocess.run(
        tpuwizard_cmd(*args), cwd=tmp_path, capture_output=True, text=True, timeout=240,
        env=env(**extra),
    )  # fmt: skip


def test_os_login_keys_are_deleted_from_a_read_only_home_only_once_no_node_uses_them(
    tmp_path, home, served_os_login
):
    """Two nodes kept under OS Login log in with the one key: `down` of the first keeps it in
    the profile (the second's record, read from the ledger, still uses it); `teardown --all`
    of the second deletes it. Both from a read-only home, each record held, nothing claimed
    that the practice OS Login API's state does not show."""
    settings = served_os_login
    first, second = (up(tmp_path, "--name", n, **settings) for n in ("ro-a", "ro-b"))
    fingerprints = {
        json.loads(line)["login"].get("fingerprint")
        for line in (home / "sandbox" / "ledger.jsonl").read_text().splitlines()
        if json.loads(line)["op"] == "intent"
    }
    [fingerprint] = fingerprints  # one per-install key: both log in with it
    assert list(profile_keys(tmp_path)) == [fingerprint]

    down = cli_read_only(home, tmp_path, settings, "down", first["name"], "--yes", "--sandbox")
    assert down.returncode == 0, said(down)
    assert "verified gone: ro-a" in said(down) and f"{home} is read-only" in said(down)
    assert f"stays in your OS Login profile: {second['name']} still logs in with it" in said(down)
    assert list(profile_keys(tmp_path)) == [fingerprint]

    ended = cli_read_only(home, tmp_path, settings, "teardown", "--all", "--yes", "--sandbox")
    assert ended.returncode == 0, said(ended)
    assert "verified gone: ro-b" in said(ended)
    assert f"Deleted tpuwizard's SSH key {fingerprint[:12]} from your OS Login profile" in said(
        ended
    )
    assert profile_keys(tmp_path) == {}
    assert said(ended).count("could not record that") == 1 and ".held" in said(ended)

    after = writable(tmp_path, settings, "status", "--sandbox", "--json")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["kept"] == [] and ledger_all_gone(home)


FOREVER = "import time\nprint('sleeping', flush=True)\nwhile True:\n    time.sleep(1)\n"


def killed_launch(tmp_path: Path, extra: dict[str, str], route: str, running: str) -> list[dict]:
    """`launch --route ROUTE --sandbox` of a script that never ends, SIGKILLed once an event
    named ``running`` came: its kernel or session is left, with its open record. Its events."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "main.py").write_text(FOREVER)
    argv = ["launch", "--route", route, "--sandbox", "--json", "--script", "main.py"]
    proc = subprocess.Popen(
        tpuwizard_cmd(*argv), cwd=project, env=env(**extra), stdout=subprocess.PIPE, text=True
    )
    events: list[dict] = []
    reader = threading.Thread(
        target=lambda: events.extend(json.loads(line) for line in proc.stdout or ()), daemon=True
    )
    reader.start()
    try:
        wait_until(lambda: any(running in json.dumps(e) for e in events), 180, running)
    finally:
        proc.kill()  # SIGKILL: nothing of tpuwizard's own stop runs
        proc.wait(timeout=60)
        reader.join(timeout=60)
    return events


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def held_files(tmp_path: Path, ledger: str) -> list[Path]:
    return list((tmp_path / "tmp").glob(f"tpuwizard-*/{ledger}.*.held"))


def test_a_left_practice_kaggle_kernel_is_listed_and_closed_from_a_read_only_home(
    tmp_path, home, served
):
    """A killed run's kernel runs on in the stand-in: `status` lists it RUNNING and `teardown
    --all` says it cannot end it (exit 4), both from a read-only home; once its session ended,
    `status` closes its record, held outside the home and moved in by the next writable one."""
    settings = {**served, "HOME": str(tmp_path / "user"), "TPUWIZARD_KAGGLE_POLL": "0.1"}
    events = killed_launch(tmp_path, settings, "kaggle", '"state": "RUNNING"')
    [pushed] = [e for e in events if e["event"] == "kernel_pushed"]
    try:
        _left_kernel_listed_then_closed(tmp_path, home, settings, pushed["kernel"])
    finally:  # a failed check leaves no kernel running to its session limit
        for state in (home / "kaggle-sandbox" / "kernels").glob("*/v*/session.json"):
            group = json.loads(state.read_text()).get("group")
            if isinstance(group, int) and group > 1 and _group_alive(group):
                os.killpg(group, signal.SIGKILL)


def _left_kernel_listed_then_closed(
    tmp_path: Path, home: Path, settings: dict[str, str], pushed: str
) -> None:
    shown = cli_read_only(home, tmp_path, settings, "status", "--sandbox", "--json")
    assert shown.returncode == 0, said(shown)
    [kernel] = json.loads(shown.stdout)["kaggle_kernels"]
    assert (kernel["kernel"], kernel["state"], kernel["may_run"]) == (
        pushed, "RUNNING", True
    )  # fmt: skip
    assert f"{home} is read-only" in said(shown)

    ended = cli_read_only(home, tmp_path, settings, "teardown", "--all", "--yes", "--sandbox")
    assert ended.returncode == 4 and "not deleted: its session still runs" in said(ended)

    group = kernel["process_group"]
    os.killpg(group, signal.SIGKILL)  # as status says: `kill -- -GROUP` ends it sooner
    wait_until(lambda: not _group_alive(group), 60, "the kernel's session to end")
    closed = cli_read_only(home, tmp_path, settings, "status", "--sandbox", "--json")
    assert closed.returncode == 0, said(closed)
    [kernel] = json.loads(closed.stdout)["kaggle_kernels"]
    assert kernel["gone"] and not kernel["may_run"]
    [held] = held_files(tmp_path, "kaggle-ledger.jsonl")
    assert json.loads(held.read_text())["op"] == "deleted"
    assert f"held in {held.parent}" in said(closed)  # where its record is, said
    [record] = kernel["records_held"]  # and with the kernel it closed
    assert (record["op"], record["kept_in"]) == ("deleted", str(held))

    after = writable(tmp_path, settings, "status", "--sandbox", "--json")
    assert after.returncode == 0 and json.loads(after.stdout)["kaggle_kernels"] == []
    assert not held.exists()  # moved into the Kaggle ledger


def test_a_left_practice_colab_session_in_a_read_only_home_is_said_unchecked_not_stopped(
    tmp_path, home, served
):
    """The practice Colab stand-in keeps its runtimes in the home: from a read-only one it can
    neither list nor stop a killed run's session, and `status` (exit 3) and `teardown --all`
    (exit 4) say so, with what stops it, the session untouched; writable again, it is stopped."""
    settings = {**served, "HOME": str(tmp_path / "user"), "TPUWIZARD_COLAB_POLL": "0.5"}
    events = killed_launch(tmp_path, settings, "colab", '"text": "sleeping"')
    [planned] = [e for e in events if e["event"] == "colab_planned"]
    session = planned["session"]
    stand_in = home / "colab-sandbox"
    before = (stand_in / "state.json").read_text()
    try:
        _left_session_said_not_stopped(tmp_path, home, settings, session, before)
    finally:  # writable again: stopped, whatever the checks above found (no cell left running)
        stopped = writable(tmp_path, settings, "teardown", "--all", "--yes", "--sandbox")
    assert stopped.returncode == 0, said(stopped)
    assert f"Stopped {session}: colab sessions no longer lists it." in said(stopped)


def _left_session_said_not_stopped(
    tmp_path: Path, home: Path, settings: dict[str, str], session: str, before: str
) -> None:
    stand_in = home / "colab-sandbox"

    shown = cli_read_only(home, tmp_path, settings, "status", "--sandbox", "--json")
    assert shown.returncode == 3, said(shown)
    [seen] = json.loads(shown.stdout)["colab_sessions"]
    assert (seen["session"], seen["state"]) == (session, "read-only-home")

    ended = cli_read_only(home, tmp_path, settings, "teardown", "--all", "--yes", "--sandbox")
    assert ended.returncode == 4, said(ended)
    assert f"{session} was NOT stopped: the practice Colab stand-in keeps it in {stand_in}" in (
        said(ended)
    )
    assert f"`tpuwizard teardown {session} --sandbox` stops it" in said(ended)
    assert (stand_in / "state.json").read_text() == before  # untouched: still running
