"""Create once, iterate, tear down at the end: up, run, watch, down and the idle deadline,
through the real CLI in subprocesses against the practice sandbox."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import (
    down,
    json_events,
    read_until,
    run,
    start,
    up,
)
from tests.integration.launch_helpers import (
    ZONE,
    env,
    ledger_all_gone,
    sandbox_is_empty,
)
from tests.integration.test_multihost import JOINS
from tests.waiting import wait_until
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("kept-node-e2e")


def cloud_of(home: Path) -> TpuCloud:
    """A client of the lasting sandbox, with the token it answers to."""
    from google.oauth2.credentials import Credentials

    server = json.loads((home / "sandbox" / "server.json").read_text())
    return TpuCloud(
        PRACTICE_PROJECT,
        endpoint=server["endpoint"],
        credentials=Credentials(token=server["token"]),
    )


def test_up_run_twice_a_failing_script_and_down(tmp_path, home, project):
    script = project / "train.py"
    script.write_text(
        "import sys, jax\n"
        "print('devices', jax.device_count(), 'args', sys.argv[1:])\n"
        "open('out.txt', 'w').write('trained')\n"
    )
    (project / "data.txt").write_text("x" * 1000)
    kept = up(tmp_path)  # the last line of the event stream is the Kept event
    assert kept["zone"] == ZONE and kept["receipt"] and Path(kept["receipt"]).is_file()
    assert kept["deadline"] > time.time() and kept["idle_minutes"] == 30
    assert kept["node"] == kept["name"] and kept["accelerator"] == "v5litepod-1"

    first = run(tmp_path, "--fetch", "out.txt", str(script), "one", "two words")
    assert first.returncode == 0, first.stderr
    assert "devices 1 args ['one', 'two words']" in first.stdout
    assert "copied 2 changed file(s)" in first.stderr
    fetched = [
        line.removeprefix("Copied back ")
        for line in first.stderr.splitlines()
        if line.startswith("Copied back ")
    ]
    assert Path(fetched[0]).read_text() == "trained"

    second = run(tmp_path, str(script))
    assert second.returncode == 0, second.stderr
    assert "nothing changed since the last copy" in second.stderr
    kept_line = f"[practice] Kept: {kept['name']} (v5litepod-1) in {ZONE}, not billed ($"
    assert kept_line in second.stderr and "It deletes itself after 30 minutes" in second.stderr
    assert "installing" not in second.stderr + second.stdout  # no bootstrap, no verifier
    assert "PASS" not in second.stderr + second.stdout
    # Issue 55.11: status's table says how the kept node ends, as its Kept line under it does.
    status = subprocess.run(
        tpuwizard_cmd("status", "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )
    assert status.returncode == 0, status.stderr
    said = " ".join(status.stdout.split())
    assert said.count("It deletes itself after 30 minutes without a run, at the latest") == 2
    assert "ends: It deletes itself" in said  # the row's (a pipe is 80 columns: one record)

    script.write_text("print('about to fail', flush=True)\nraise SystemExit(3)\n")
    (project / "data.txt").unlink()
    failed = run(tmp_path, "--json", str(script))
    assert failed.returncode == 1
    events = json_events(failed.stdout)
    by_name = {e["event"]: e for e in events}
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "finished"
    assert events[-1]["exit_code"] == 1 and by_name["script_finished"]["exit_code"] == 3
    synced = by_name["folder_synced"]
    assert (synced["changed"], synced["deleted"]) == (["train.py"], ["data.txt"])
    assert by_name["script_line"]["text"] == "about to fail"
    assert "exited with code 3" in failed.stderr
    workdir = next(home.glob("sandbox/workers/*/*/*/w0/.tpuwizard/work"))
    assert not (workdir / "data.txt").exists()  # removed there too

    gone = down(tmp_path, kept["name"])
    assert [r["verified"] for r in gone["results"]] == [True]
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_ctrl_c_stops_the_script_on_every_worker_and_keeps_the_node(tmp_path, home, project):
    script = project / "slow.py"
    script.write_text(
        "import os, time\n"
        "print('started on', os.environ['TPUWIZARD_WORKER'], flush=True)\n"
        "time.sleep(120)\n"
    )
    kept = up(tmp_path, accelerator="v5litepod-16")
    proc = start(tmp_path, "run", str(script))
    seen: list[str] = []
    started: set[str] = set()
    while len(started) < 4:
        line = read_until(proc, lambda text: "started on" in text, seen)
        started.add(line.split()[0])
    assert started == {"[w0]", "[w1]", "[w2]", "[w3]"}  # every worker streams, prefixed
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    said = proc.stderr.read()  # type: ignore[union-attr]
    assert "stopping your script (the node stays)" in said
    # Still running, kept (practice: not billed).
    assert "Done (exit 130). Run folder: " in said
    assert f"Still running (practice: not billed): {kept['name']}" in said
    node = cloud_of(home).get_node(ZONE, kept["name"])
    assert node is not None and node.state == "READY"  # the node stays
    for exit_file in home.glob("sandbox/workers/*/*/*/w*/.tpuwizard/jobs/run-*/exit"):
        assert exit_file.read_text().strip() == "143"  # each worker's script was ended
    assert len(list(home.glob("sandbox/workers/*/*/*/w*/.tpuwizard/jobs/run-*/exit"))) == 4


def test_run_on_a_multi_host_node_joins_every_worker_with_jax_distributed(tmp_path, home, project):
    script = project / "joins.py"
    script.write_text(JOINS)
    up(tmp_path, accelerator="v5litepod-16")
    done = run(tmp_path, str(script))
    assert done.returncode == 0, done.stderr
    lines = sorted(line for line in done.stdout.splitlines() if "processes" in line)
    assert lines == [f"[w{w}] processes 4 index {w} devices 16" for w in range(4)]


def test_watch_runs_again_when_a_file_is_saved(tmp_path, home, project):
    script = project / "train.py"
    script.write_text("print('version 1', flush=True)\n")
    up(tmp_path)
    proc = start(tmp_path, "watch", str(script))
    seen: list[str] = []
    read_until(proc, lambda text: text == "version 1", seen)
    # The first run's output is in; a save now must bring a new run.
    script.write_text("print('version 2', flush=True)\n")
    read_until(proc, lambda text: text == "version 2", seen)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130  # ended by Ctrl+C, as every command says it
    err = proc.stderr.read()  # type: ignore[union-attr]
    assert "ending the watch" in err and "tpuwizard down --sandbox" in err  # no terminal to ask

    # ssh: a shell on the worker, in the folder the runs use, with a heartbeat as it opens,
    # the venv active and the script's variables set; the course's .venv/bin/python works.
    before = time.time()
    shell = subprocess.run(
        tpuwizard_cmd("ssh", "--sandbox"),
        cwd=tmp_path,
        input="pwd\necho marker-$((6*7))\n"
        "python -c \"import jax; print('backend', jax.default_backend())\"\n"
        "test -x .venv/bin/python && echo dot-venv-ok\nexit 5\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env(),
    )
    assert shell.returncode == 5, shell.stderr  # the shell's own exit status
    home_w0 = next(home.glob("sandbox/workers/*/*/*/w0"))
    assert str(home_w0 / ".tpuwizard" / "work") in shell.stdout and "marker-42" in shell.stdout
    assert "backend cpu" in shell.stdout and "dot-venv-ok" in shell.stdout
    assert "COURSE_EXPECT_PLATFORM=cpu JAX_PLATFORMS=cpu set" in shell.stdout  # the banner
    assert (home_w0 / ".tpuwizard" / "heartbeat").stat().st_mtime >= before - 1
    assert "[practice] Kept: " in shell.stderr and "It deletes itself after" in shell.stderr


def test_the_idle_deadline_deletes_the_node_after_the_laptop_is_killed(tmp_path, home, project):
    # Long enough for `run` to start and send its first heartbeat after `up` has handed the node
    # over, on a loaded machine (up's last beat starts the idle time: a shorter one ends the node
    # between the two commands, as it should).
    idle_s = 15.0
    script = project / "count.py"
    script.write_text(
        "import time\nfor i in range(1000):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"
    )
    kept = up(tmp_path, "--idle", str(idle_s / 60))
    cloud = cloud_of(home)
    proc = start(tmp_path, "run", str(script))
    seen: list[str] = []
    # Heartbeats keep it alive past the idle time while the run goes on...
    read_until(proc, lambda text: text == f"tick {int(idle_s) + 3}", seen)
    assert cloud.get_node(ZONE, kept["name"]) is not None
    os.kill(proc.pid, signal.SIGKILL)  # ...then the laptop dies mid-run
    proc.wait(timeout=60)
    killed = time.time()
    wait_until(lambda: cloud.get_node(ZONE, kept["name"]) is None, 60, "the watchdog's delete", 0.2)
    assert cloud.node_gone(ZONE, kept["name"])
    # Not before the idle time since the last heartbeat (sent at most every idle/4 s).
    assert time.time() - killed >= idle_s - idle_s / 4 - 1
    proc_status = run(tmp_path, str(script))
    assert proc_status.returncode == 2 and "is gone" in proc_status.stderr


def test_up_refuses_to_keep_a_node_no_watchdog_would_delete(tmp_path, home, project):
    refused = subprocess.run(
        tpuwizard_cmd("up", "--sandbox", "--zone", ZONE, "--accelerator", "v5litepod-1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env=env(TPUWIZARD_SANDBOX_FAULTS="sa_no_delete=1"),
    )
    assert refused.returncode == 2  # a refusal before any create (issue 55.11), not a failure
    assert "Refusing to keep" in refused.stderr and "roles/tpu.admin" in refused.stderr
    assert "To allow the watchdog: gcloud" in refused.stderr  # said by the check before create
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_one_run_at_a_time_and_each_stop_signal_exits_with_its_code(tmp_path, home, project):
    script = project / "slow.py"
    script.write_text("print('started', flush=True)\nimport time\ntime.sleep(120)\n")
    kept = up(tmp_path)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        first = start(tmp_path, "run", str(script))
        read_until(first, lambda text: "started" in text, [])
        second = run(tmp_path, str(script))  # while the first runs: refused at once
        assert second.returncode == 1, second.stderr
        assert f"{kept['name']} is busy: `tpuwizard run slow.py` (pid {first.pid}" in second.stderr
        assert "--wait" in second.stderr
        first.send_signal(sig)
        assert first.wait(timeout=60) == 128 + sig
    exits = list(home.glob("sandbox/workers/*/*/*/w0/.tpuwizard/jobs/run-*/exit"))
    assert len(exits) == 2 and all(f.read_text().strip() == "143" for f in exits)  # ended
    node = cloud_of(home).get_node(ZONE, kept["name"])
    assert node is not None and node.state == "READY"  # the node stays


def test_a_node_deleted_under_a_running_script_says_it_went_away(tmp_path, home, project):
    """Issue 22, item 14: it read "A file on this computer could not be written or read" (the
    sandbox's VM is a folder here, and it was gone)."""
    script = project / "slow.py"
    script.write_text("print('started', flush=True)\nimport time\ntime.sleep(120)\n")
    kept = up(tmp_path)
    proc = start(tmp_path, "run", str(script))
    read_until(proc, lambda text: "started" in text, [])
    cloud_of(home).delete_node(ZONE, kept["name"])  # its watchdog, or someone, deleted it
    assert proc.wait(timeout=120) == 3  # a cloud event, not the script's failure
    said = proc.stderr.read()  # type: ignore[union-attr]
    assert "The TPU VM went away" in said and f"{kept['name']} no longer exists" in said
    assert "file on this computer" not in said and "OS Login" not in said


def test_a_kept_name_used_again_after_its_node_was_deleted_keeps_one_node(tmp_path, home, project):
    """Issue 39, item 5: the earlier record (its node verified gone) is closed first, so `up`
    hands the new node over and `run --node` finds one node, with no `status` in between."""
    first = up(tmp_path, "--name", "wd2")
    cloud = cloud_of(home)
    cloud.delete_node(ZONE, first["name"])  # what its idle watchdog does, behind our back
    assert cloud.node_gone(ZONE, "wd2")
    again = up(tmp_path, "--name", "wd2")  # exit 0, or `up` asserts
    assert again["name"] == "wd2"
    (project / "hello.py").write_text("print('hello again')\n")
    ran = run(tmp_path, "--node", "wd2", str(project / "hello.py"))
    assert ran.returncode == 0 and "hello again" in ran.stdout, ran.stderr
    assert run(tmp_path, str(project / "hello.py")).returncode == 0  # the only kept node
    down(tmp_path, "wd2")
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_status_closes_the_run_folder_of_a_node_its_idle_watchdog_deleted(tmp_path, home, project):
    """Issue 52, item 2 (newcomer round 6, D1): `up --idle 0.2`, its watchdog deletes it, then
    `status`: the run folder closed, the reason the idle limit, not the deadline."""
    kept = up(tmp_path, "--idle", "0.2")
    name, cloud = kept["name"], cloud_of(home)
    wait_until(lambda: cloud.get_node(ZONE, name) is None, 90, "the watchdog's delete", 0.2)
    status = subprocess.run(
        tpuwizard_cmd("status", "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )
    assert status.returncode == 0, status.stderr
    assert f"{name}, kept in {ZONE}, is gone" in status.stderr
    assert "its watchdog, after 0.2 minutes without a run" in status.stderr
    assert "deadline" not in status.stderr
    (folder,) = {p.parent for p in tmp_path.glob("runs/*/outcome.json")}
    outcome = json.loads((folder / "outcome.json").read_text())
    assert outcome["still_existing"] == [] and name in outcome["verified_gone"]
    assert outcome["kept_gone"][name]["reason"] == "idle"
    assert outcome["kept_gone"][name]["seen_by"] == "status"
    spent = json.loads((folder / "cost.json").read_text())
    assert spent["still_running"] is False
    assert spent["last_seen_present_at"] <= spent["verified_gone_at"]
    assert ledger_all_gone(home)
