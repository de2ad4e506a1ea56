"""A sandbox node's delete ends every process of its VMs (issue 39, item 11): the job's process
group, and a process the script detached from it with ``setsid``, found by the ``HOME`` it was
started with (the worker's). Real processes, no cloud."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tpuwizard.sandbox.workers.processes import end_worker_processes

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

# The worker's job: it starts a child in a session of its own (setsid), says its pid, and ends.
DETACH = (
    "import subprocess, sys, time;"
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'],"
    " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL);"
    "print(p.pid, flush=True)"
)


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for its parent to read its end)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _detached_child(home: Path) -> int:
    """Run the job as a worker runs it (HOME and cwd its home); the pid of what it left."""
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", DETACH], env=env, cwd=home, capture_output=True, text=True
    )
    pid = int(done.stdout.strip())
    assert _alive(pid) and os.getsid(pid) == pid  # it leads a session: no job group holds it
    return pid


def test_a_detached_process_of_a_deleted_nodes_worker_is_ended(tmp_path):
    node = tmp_path / "workers" / "p" / "z" / "dev2"
    home = node / "w0"
    home.mkdir(parents=True)
    pid = _detached_child(home)
    end_worker_processes(node)
    wait_until(lambda: not _alive(pid), 30, "the detached process ended")


def test_another_nodes_processes_are_left_running(tmp_path):
    mine, theirs = tmp_path / "workers" / "mine", tmp_path / "workers" / "mine-2"
    (mine / "w0").mkdir(parents=True)
    (theirs / "w0").mkdir(parents=True)  # a name that begins like it: not within it
    pid = _detached_child(theirs / "w0")
    try:
        end_worker_processes(mine)
        assert _alive(pid)
    finally:
        os.kill(pid, 9)


def test_a_stale_pid_file_does_not_end_the_group_that_now_has_its_number(tmp_path):
    # A job's pid file outlives the job; once the pid numbers came round, its number named
    # another process's group (another node's watchdog, a lasting sandbox): SIGKILLed.
    mine, theirs = tmp_path / "workers" / "mine", tmp_path / "workers" / "theirs"
    (theirs / "w0").mkdir(parents=True)
    pid = _detached_child(theirs / "w0")  # leads its own group: pgid == pid
    job = mine / "w0" / ".tpuwizard" / "jobs" / "bootstrap"
    job.mkdir(parents=True)
    (job / "pid").write_text(f"{pid}\n")  # the bootstrap ended long ago; its number came round
    try:
        end_worker_processes(mine)
        assert _alive(pid)
    finally:
        os.kill(pid, 9)


def test_a_job_group_whose_leader_is_the_vms_is_ended(tmp_path):
    node = tmp_path / "workers" / "p" / "z" / "dev3"
    (node / "w0").mkdir(parents=True)
    pid = _detached_child(node / "w0")
    job = node / "w0" / ".tpuwizard" / "jobs" / "run-1"
    job.mkdir(parents=True)
    (job / "pid").write_text(f"{pid}\n")
    end_worker_processes(node)
    wait_until(lambda: not _alive(pid), 30, "the job's group ended")
