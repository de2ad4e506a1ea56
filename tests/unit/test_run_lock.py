"""One run at a time on a kept node (issue "Every path keeps the promise", item 9): a second
run refuses at once, naming the first; --wait waits; a stop ends the wait; a dead holder frees
the node."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.launch.kept.run_lock import NodeBusy, lock_path, run_lock


@pytest.fixture
def path(tmp_path):
    return lock_path(tmp_path, "us-central1-a", "dev")


def test_a_second_run_refuses_at_once_naming_the_first(path):
    with (
        run_lock(path, "dev", "tpuwizard run a.py"),
        pytest.raises(NodeBusy) as busy,
        run_lock(path, "dev", "tpuwizard run b.py"),
    ):
        pass
    holder = busy.value.holder
    assert holder is not None and holder.pid == os.getpid()
    assert "`tpuwizard run a.py` (pid" in str(busy.value) and "--wait" in str(busy.value)
    with run_lock(path, "dev", "tpuwizard run b.py"):  # free again once the first ended
        pass


def test_wait_starts_once_the_first_has_ended(path):
    order: list[str] = []
    notes: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with run_lock(path, "dev", "tpuwizard run a.py"):
            first_in.set()
            release.wait(60)
            order.append("first ended")

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(60)
    threading.Timer(0.3, release.set).start()
    with run_lock(path, "dev", "tpuwizard run b.py", wait=True, on_wait=notes.append, poll=0.02):
        order.append("second started")
    thread.join()
    assert order == ["first ended", "second started"]
    assert "dev is busy with `tpuwizard run a.py`" in notes[0]


def test_a_stop_ends_the_wait(path):
    token = CancelToken()
    with run_lock(path, "dev", "tpuwizard run a.py"):
        threading.Timer(0.2, token.set).start()
        with (
            pytest.raises(Cancelled),
            run_lock(path, "dev", "b", wait=True, cancel=token, poll=0.02),
        ):
            pass


def test_a_killed_holder_leaves_the_node_free(path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from tpuwizard.core.launch.kept.run_lock import run_lock\n"
            f"with run_lock(Path({str(path)!r}), 'dev', 'tpuwizard run a.py'):\n"
            "    print('in', flush=True); time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "in"
    with pytest.raises(NodeBusy), run_lock(path, "dev", "b"):
        pass
    holder.kill()
    holder.wait()
    with run_lock(path, "dev", "b"):  # the kernel released it with the process
        pass
