"""Stopping at the smallest level: a cancelled follower returns at once, a stopped job is gone
with everything it started, and a launch that cannot start still ends with Failed + Finished."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.fakes import checked
from tests.plans import launch_plan
from tests.waiting import wait_until
from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.remote.jobs import Job, follow_job, start_job, stop_job
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.words.choice_words import all_words

CHATTY = "for i in $(seq 600); do echo tick $i; sleep 1; done"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # reaped meanwhile
        return False
    return "State:\tZ" not in status


@pytest.fixture
def worker(tmp_path) -> LocalTransport:
    home = tmp_path / "w0"
    home.mkdir()
    return LocalTransport([home])


def test_a_cancelled_follower_returns_at_once_while_the_job_runs_on(worker, tmp_path):
    job = Job("chatty")
    start_job(worker, 0, job, CHATTY)
    token = CancelToken()
    lines: list[str] = []
    raised: list[BaseException] = []

    def follow() -> None:
        try:
            follow_job(worker, 0, job, lines.append, cancel=token)
        except BaseException as err:
            raised.append(err)

    thread = threading.Thread(target=follow)
    thread.start()
    wait_until(lambda: lines, 30, "the job's first line")
    token.set("test")
    # The job runs 600 s: a follower back within 30 s (slack for a loaded machine) did not
    # wait for it.
    thread.join(timeout=30)
    assert not thread.is_alive(), "the follower waited for the job"
    assert isinstance(raised[0], Cancelled)
    pid = int((tmp_path / "w0" / job.folder / "pid").read_text())
    assert alive(pid), "cancelling the follower must not stop the job (Keep relies on it)"
    stop_job(worker, 0, job)


def test_stop_job_ends_the_job_and_its_children_and_writes_an_exit_code(worker, tmp_path):
    job = Job("chatty")
    start_job(worker, 0, job, f"sleep 600 & {CHATTY}")
    folder = tmp_path / "w0" / job.folder
    wait_until(lambda: (folder / "pid").exists(), 30, "the job's pid file")
    pgid = int((folder / "pid").read_text())
    stop_job(worker, 0, job)
    # stop_job ends with a SIGKILL and does not wait for the kernel to carry it out: under load
    # a killed member is still finishing a moment later (one that outlived it would run 600 s).
    wait_until(lambda: _members(pgid) == [], 60, "the job's processes to end after stop_job")
    assert (folder / "exit").read_text().strip() == "143"


def _members(pgid: int) -> list[str]:
    return [
        p.name
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _pgid(int(p.name)) == pgid and alive(int(p.name))
    ]


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def test_a_transport_command_in_flight_is_killed_by_a_cancel(worker):
    token = CancelToken()
    worker.cancel = token
    threading.Timer(0.3, token.set, args=("test",)).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        worker.run(0, "sleep 600")
    assert time.monotonic() - started < 60  # not the command's 600 s: slack for a loaded machine


def test_a_launch_that_cannot_start_ends_with_failed_and_finished(tmp_path, monkeypatch):
    from tpuwizard.session import runtime
    from tpuwizard.session.session import Session

    def broken(*_args, **_kwargs):
        raise OSError("ssh-keygen is not installed")

    monkeypatch.setattr(runtime, "build_runtime", broken)
    session = Session(practice=True)
    monkeypatch.setattr(Session, "cloud_for", lambda self, backend: object())
    plan = launch_plan("v5litepod-4", "us-central1-a", "tpuwizard-practice", "r1", tmp_path / "r1")
    events = list(session.start_launch(checked(plan)).events())
    assert [type(e) for e in events] == [ev.Failed, ev.Finished]
    assert isinstance(events[-1], ev.Finished) and events[-1].exit_code == 3
    assert not session.billing.may_bill()


def test_a_plan_with_problems_ends_with_failed_and_exit_2_before_any_call(tmp_path, monkeypatch):
    from tpuwizard.core.launch.lifecycle.launch import run_launch

    plan = launch_plan(
        "v5litepod-4",
        "us-central1-a",
        "tpuwizard-practice",
        "r1",
        tmp_path / "r1",
        workload=Workload(fetch=("../../etc/*",)),
    )
    seen: list[ev.Event] = []

    class NoCloud:  # any attribute access would be a cloud call
        def __getattr__(self, name):
            raise AssertionError(f"the launch touched the runtime: {name}")

    assert run_launch(plan, NoCloud(), seen.append) == 2  # type: ignore[arg-type]
    assert [type(e) for e in seen] == [ev.Failed, ev.Finished]
    assert isinstance(seen[0], ev.Failed)
    assert any("relative" in step for step in all_words(seen[0].diagnosis.next_steps, "cli"))
