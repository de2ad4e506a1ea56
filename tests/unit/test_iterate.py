"""Copying only what changed, the watchdog's idle clock, heartbeats and kept-node deadlines."""

import os
import sys
import threading
import time
from argparse import Namespace
from pathlib import Path

import pytest
from tpuwizard_verify import tpu_watchdog

from tests.waiting import wait_until
from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.kept.heartbeat_book import HeartbeatBook
from tpuwizard.core.launch.kept.iterate import ScriptRun
from tpuwizard.core.launch.workers.heartbeat import heartbeat_interval, heartbeats
from tpuwizard.core.launch.workers.jobs import ScriptJob
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.sync import WORK_DIR, LocalFolder, sync_folder
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.session.kept.lines import KeptInfo
from tpuwizard.words.kept_end import kept_info_line


@pytest.fixture
def worker(tmp_path) -> LocalTransport:
    """A worker home with a bootstrapped venv's python (this interpreter)."""
    home = tmp_path / "w0"
    (home / ".tpuwizard" / "venv" / "bin").mkdir(parents=True)
    (home / ".tpuwizard" / "venv" / "bin" / "python").symlink_to(sys.executable)
    return LocalTransport([home])


def test_only_changed_files_travel_and_deleted_ones_go(tmp_path, worker):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text("print(1)\n")
    (src / "pkg" / "model.py").write_text("W = 2\n")
    (src / "odd name; rm -rf ~.txt").write_text("quoted by tar, never by a shell\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_bytes(b"skip")
    folder = LocalFolder(src)
    first = sync_folder(worker, 0, folder)
    assert sorted(first.changed) == ["odd name; rm -rf ~.txt", "pkg/model.py", "train.py"]
    remote = worker.homes[0] / WORK_DIR
    assert (remote / "pkg" / "model.py").read_text() == "W = 2\n"
    assert not (remote / "__pycache__").exists()

    again = sync_folder(worker, 0, folder)
    assert (again.changed, again.deleted, again.bytes_sent) == ([], [], 0)

    (src / "pkg" / "model.py").write_text("W = 3\n")
    (src / "odd name; rm -rf ~.txt").unlink()
    third = sync_folder(worker, 0, folder)
    assert third.changed == ["pkg/model.py"] and third.deleted == ["odd name; rm -rf ~.txt"]
    assert (remote / "pkg" / "model.py").read_text() == "W = 3\n"
    assert not (remote / "odd name; rm -rf ~.txt").exists()
    assert (remote / "train.py").exists()


def test_a_file_edited_on_the_worker_is_not_mistaken_for_current_after_a_lost_manifest(
    tmp_path, worker
):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.py").write_text("1")
    sync_folder(worker, 0, LocalFolder(src))
    (worker.homes[0] / WORK_DIR / ".tpuwizard-manifest.json").write_text("not json")
    assert sync_folder(worker, 0, LocalFolder(src)).changed == ["a.py"]  # sent again, safely


def test_a_linked_script_reaches_the_worker_as_its_target_and_other_links_stay(tmp_path, worker):
    # A linked script was skipped with every link, so the worker ran a file it never got.
    src, elsewhere = tmp_path / "src", tmp_path / "elsewhere"
    src.mkdir()
    elsewhere.mkdir()
    (elsewhere / "v3.py").write_text("print('v3')\n")
    (elsewhere / "secret.txt").write_text("not yours to send")
    (src / "train.py").symlink_to(elsewhere / "v3.py")
    (src / "data.txt").symlink_to(elsewhere / "secret.txt")
    folder = LocalFolder.of_script(src / "train.py")
    assert sync_folder(worker, 0, folder).changed == ["train.py"]
    sent = worker.homes[0] / WORK_DIR / "train.py"
    assert not sent.is_symlink() and sent.read_text() == "print('v3')\n"
    assert not (worker.homes[0] / WORK_DIR / "data.txt").exists()
    (elsewhere / "v3.py").write_text("print('v4')\n")  # an edit of the target is a change
    assert sync_folder(worker, 0, folder).changed == ["train.py"]
    assert sent.read_text() == "print('v4')\n"


def test_a_huge_folder_is_refused_with_advice(tmp_path, monkeypatch):
    import tpuwizard.core.remote.sync as sync

    monkeypatch.setattr(sync, "MAX_FOLDER_BYTES", 10)
    (tmp_path / "data.bin").write_bytes(b"x" * 11)
    with pytest.raises(BadInput, match="move data"):
        LocalFolder(tmp_path).manifest()


def _args(tmp_path: Path, idle: float, deadline: float) -> Namespace:
    return Namespace(
        deadline=deadline,
        idle_seconds=idle,
        heartbeat=str(tmp_path / "hb"),
        retry=0.05,
        give_up_after=86400.0,  # the defaults: an API that does not answer ends nothing here
        give_up_before_deadline=False,
        last_answer=time.time(),
    )


def test_the_watchdog_ends_its_wait_at_the_idle_time_without_heartbeats(tmp_path):
    started = time.time()
    args = _args(tmp_path, 0.3, started + 60)
    assert tpu_watchdog.wait_for_ending(args, started) == "idle"
    assert time.time() - started >= 0.3


def test_heartbeats_push_the_idle_end_back(tmp_path):
    args = _args(tmp_path, 0.4, time.time() + 60)
    beats = threading.Event()

    def beat_for(seconds: float) -> None:
        end = time.time() + seconds
        while time.time() < end and not beats.is_set():
            Path(args.heartbeat).touch()
            time.sleep(0.05)

    thread = threading.Thread(target=beat_for, args=(1.2,))
    started = time.time()
    thread.start()
    assert tpu_watchdog.wait_for_ending(args, started) == "idle"
    beats.set()
    thread.join()
    assert time.time() - started >= 1.2  # not before the beats stopped plus the idle time


def test_the_max_run_deadline_ends_the_wait_even_with_heartbeats(tmp_path):
    (tmp_path / "hb").touch()
    started = time.time()
    assert tpu_watchdog.wait_for_ending(_args(tmp_path, 30, started + 0.2), started) == "deadline"


def test_heartbeats_beat_now_and_on_an_interval_and_report_failures():
    calls: list[float] = []
    errors: list[str] = []
    failed = threading.Event()

    def beat() -> None:
        calls.append(time.time())
        if len(calls) == 2:
            failed.set()
            raise OSError("connection lost")

    with heartbeats(beat, 0.05, errors.append):
        assert len(calls) == 1  # before the block's work starts
        assert failed.wait(30)
        wait_until(lambda: len(calls) >= 3, 30, "a beat after the failed one")
    assert errors == ["heartbeat not sent: connection lost"]
    assert heartbeat_interval(1800) == 60 and heartbeat_interval(8) == 2


def test_heartbeat_book_keeps_the_latest(tmp_path):
    book = HeartbeatBook(tmp_path / "heartbeats.json")
    book.record("n", 10.0)
    book.record("n", 5.0)
    book.record("m", 7.0)
    assert book.read() == {"n": 10.0, "m": 7.0}
    (tmp_path / "heartbeats.json").write_text("garbage")
    assert book.read() == {}


def test_kept_info_idle_deadline_is_the_last_heartbeat_plus_idle_capped_by_max_run():
    info = KeptInfo("n", "z", "v5litepod-1", "READY", 100.0, 0.1, 1.2, 10_000.0, 600.0, 900.0)
    assert info.idle_deadline == 1500.0
    assert (
        KeptInfo("n", "z", "a", "READY", 100.0, None, None, 1200.0, 600.0, 900.0).idle_deadline
        == 1200.0
    )
    assert (
        KeptInfo("n", "z", "a", "READY", 100.0, None, None, None, 600.0, None).idle_deadline
        == 700.0
    )
    assert "No watchdog guards it" in kept_info_line(
        KeptInfo("n", "z", "a", "READY", 0, None, None, None, None, None)
    )


def test_script_run_env_and_problems(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("")
    run = ScriptRun(script, [], "r", tmp_path, parse_accelerator("v5litepod-4"), "cpu", ("../x",))
    assert any("without '..'" in p for p in run.problems())
    job = ScriptJob(Job("run-r"), WORK_DIR, "python", "train.py", [], None, run.env())
    env = job.env_for(1, 2)
    assert env["TPUWIZARD_WORKER"] == "1" and env["JAX_PLATFORMS"] == "cpu"
    assert env["XLA_FLAGS"].endswith("=4") and env["TPUWIZARD_RUN_ID"] == "r"
    assert (
        "XLA_FLAGS"
        not in ScriptRun(script, [], "r", tmp_path, parse_accelerator("v5litepod-4"), "tpu").env()
    )
    bad = ScriptRun(
        tmp_path / "my script.py", [], "r", tmp_path, parse_accelerator("v5litepod-1"), "tpu"
    )
    assert len(bad.problems()) == 2  # missing, and a name that is not safe
    assert os.environ.get("TPUWIZARD_WORKER") is None
