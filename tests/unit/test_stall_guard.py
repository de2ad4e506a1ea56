"""The stall guard (launch/workers/stall.py): when a worker counts as stalled, what its probe
reads on a worker, and what the report says."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tpuwizard.core.errors import StalledIn, WorkersStalled
from tpuwizard.core.launch.workers.stall import (
    PROBE,
    Probe,
    StallClock,
    StallGuard,
    StallReport,
    parse_probe,
    short_stack,
    stall_seconds,
    why_no_stack,
)
from tpuwizard.core.remote.jobs import Job


def test_a_worker_is_stalled_only_when_silent_and_idle_for_the_whole_timeout():
    clock = StallClock(workers=3, timeout_s=60, now=0)
    for worker in range(3):
        clock.reading(worker, 100, 5)  # the first reading is activity
    clock.reading(0, 150, 40)  # w0 uses CPU
    clock.line(1, 50)  # w1 prints
    clock.reading(2, 100, 40)  # w2: the same ticks, nothing printed
    assert clock.stalled(64) == []
    assert clock.stalled(65) == [2]
    clock.reading(0, 150, 100)
    clock.reading(1, 100, 100)
    assert clock.stalled(100) == [0, 2]
    assert clock.stalled(110) == [0, 1, 2]


def test_a_worker_that_does_not_answer_is_not_activity():
    clock = StallClock(workers=1, timeout_s=10, now=0)
    clock.reading(0, 7, 1)
    for t in range(2, 12):
        clock.reading(0, None, t)  # no answer, or no process left
    assert clock.stalled(11) == [0]


def test_the_timeout_default_outlasts_the_join_and_0_turns_it_off():
    from tpuwizard.core.deadlines import INIT_TIMEOUT_S

    default = stall_seconds(None)
    assert default is not None and default > INIT_TIMEOUT_S
    assert stall_seconds(1) == 60
    assert stall_seconds(0) is None


def test_who_can_give_a_stack():
    assert why_no_stack(None) == "no stack: the worker did not answer"
    stopped = Probe(10, {"42": "T"}, False, False, False)
    assert "suspended" in (why_no_stack(stopped) or "")
    dead = Probe(10, {"42": "Z"}, False, True, False)
    assert "dead" in (why_no_stack(dead) or "")
    ended = Probe(None, {}, True, True, False)
    assert "ended" in (why_no_stack(ended) or "")
    assert why_no_stack(Probe(10, {"42": "S"}, False, True, False)) is None
    # Stopped as its wrapper forks: no launcher yet, every process of the group suspended.
    early = Probe(10, {}, False, False, False, "", {"41": "T"})
    assert why_no_stack(early) == "no stack: its script is suspended (stopped), so it cannot answer"
    running = Probe(10, {}, False, False, False, "", {"41": "S"})
    assert "did not start through tpuwizard's launcher" in (why_no_stack(running) or "")


def test_the_report_names_the_stall_the_workers_and_their_lines():
    report = StallReport(
        60,
        [2],
        {0: ["starting"], 1: ["starting"], 2: []},
        {0: '  File "x.py", line 3 in <module>', 2: "no stack: its script is suspended"},
        [2],
    )
    text = report.text()
    assert text.startswith("stalled: w2 printed nothing and used no CPU time for 1 minutes")
    assert "never reached jax.distributed.initialize: w2" in text
    assert "w0's last lines:\n  starting" in text and "w2 printed nothing" in text
    assert "w2's Python stack:\n  no stack: its script is suspended" in text
    lines = report.lines()  # one fact a line, for front ends that show each on its own
    assert "w0's last lines: starting" in lines and "w2 printed nothing" in lines
    assert "w0's stack: x.py:3 in <module>" in lines
    assert "w2's stack: no stack: its script is suspended" in lines


@pytest.mark.parametrize(
    ("stalled", "not_joined", "in_join", "named", "waiting"),
    [
        # w2 suspended before the join; w1 waited in it long enough to be silent too.
        ([1, 2], [2], [0, 1, 3], [2], [1]),
        ([2], [2], [0, 1, 3], [2], []),
        # Everyone silent waits in the join; the one missing is busy elsewhere: name them all.
        ([0, 1], [2], [0, 1], [0, 1], []),
        # No worker missing from the join: a hang inside it (or after) names every silent one.
        ([0, 1], [], [0, 1], [0, 1], []),
    ],
)
def test_a_worker_waiting_in_the_join_is_not_blamed_for_the_one_that_never_came(
    stalled: list[int],
    not_joined: list[int],
    in_join: list[int],
    named: list[int],
    waiting: list[int],
) -> None:
    report = StallReport(60, stalled, {}, {}, not_joined, [], StalledIn.SCRIPT, in_join)
    assert report.blamed == named and report.waiting == waiting
    names = ", ".join(f"w{w}" for w in named)
    headline = report.headline()
    assert headline[0].startswith(f"stalled: {names} printed nothing")
    line = "silent too, waiting in jax.distributed.initialize for them: "
    assert [h for h in headline if h.startswith(line)] == (
        [line + ", ".join(f"w{w}" for w in waiting)] if waiting else []
    )


def test_a_stack_is_shortened_to_the_script_frames_innermost_first():
    stack = (
        "Current thread 0x00007fe0 (most recent call first):\n"
        '  File "/venv/jax/_src/distributed.py", line 212 in initialize\n'
        '  File "/home/w0/.tpuwizard/work/../tpu_launch.py", line 76 in wrapped\n'
        '  File "train.py", line 3 in <module>\n'
        '  File "<frozen runpy>", line 88 in _run_code\n'
        '  File "/home/w0/.tpuwizard/tpu_launch.py", line 148 in main\n'
        "\n"
        "Thread 0x00007fe1 (most recent call first):\n"
        '  File "/usr/lib/python3.12/threading.py", line 359 in wait\n'
    )
    assert short_stack(stack) == "distributed.py:212 in initialize < train.py:3 in <module>"


def probe_in(home: Path, mode: str) -> Probe:
    """PROBE run as a worker runs it, over the job ``script-x`` under ``home``."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ".tpuwizard/jobs/script-x", mode],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = parse_probe(out)
    assert found is not None, out
    return found


def test_the_probe_reads_a_job_group_cpu_and_a_suspended_launcher(tmp_path):
    """PROBE as a worker runs it: a job that leads its own group, its launcher stopped."""
    job = tmp_path / ".tpuwizard" / "jobs" / "script-x"
    job.mkdir(parents=True)
    done = tmp_path / "spun"
    spin = (
        "import pathlib, sys, time\nt = time.process_time()\n"
        "while time.process_time() - t < 0.3: pass\n"
        "pathlib.Path(sys.argv[1]).touch()\ntime.sleep(60)\n"
    )
    launcher = tmp_path / "tpu_launch.py"
    launcher.write_text(spin)
    proc = subprocess.Popen([sys.executable, str(launcher), str(done)], start_new_session=True)
    try:
        (job / "pid").write_text(str(proc.pid))

        def look(mode: str = "cpu") -> Probe:
            return probe_in(tmp_path, mode)

        wait_until(done.exists, timeout=30)
        wait_until(lambda: look().launchers == {str(proc.pid): "S"}, timeout=30)  # asleep
        first = look()
        assert (first.cpu or 0) >= 20 and not first.joining  # 0.3 s of CPU: 30 ticks of 10 ms
        os.kill(proc.pid, signal.SIGSTOP)
        wait_until(lambda: look().launchers.get(str(proc.pid)) == "T", timeout=30)
        stopped = look("stack")
        assert stopped.cpu == look().cpu and stopped.stack == ""  # a stopped one is not asked
        assert "suspended" in (why_no_stack(stopped) or "")
    finally:
        proc.kill()
        proc.wait()


def test_the_probe_sees_a_job_suspended_before_its_launcher_started(tmp_path):
    """The job's wrapper stopped before it started the launcher (SIGSTOP as it forks): the
    probe finds no launcher, and every process of the group stopped."""
    job = tmp_path / ".tpuwizard" / "jobs" / "script-x"
    job.mkdir(parents=True)
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        (job / "pid").write_text(str(proc.pid))
        os.kill(proc.pid, signal.SIGSTOP)
        wait_until(lambda: probe_in(tmp_path, "stack").group == {str(proc.pid): "T"}, timeout=30)
        found = probe_in(tmp_path, "stack")
        assert found.launchers == {} and found.stack == ""
        assert "suspended" in (why_no_stack(found) or "")
    finally:
        proc.kill()
        proc.wait()


class FakeWorkers:
    """Workers whose probe answers from a table: w1's CPU never moves and it is suspended."""

    def __init__(self) -> None:
        self.workers = 2
        self.ticks = [0, 0]
        self.stopped: list[int] = []

    def run(self, worker, command, timeout=None, cancellable=True):
        from types import SimpleNamespace

        if "kill -" not in command:  # the guard's probe (stop_job's command kills)
            if worker == 0:
                self.ticks[0] += 5  # w0 works
            state = "S" if worker == 0 else "T"
            data = {
                "cpu": self.ticks[worker],
                "launchers": {str(100 + worker): state},
                "ended": False,
                "joining": worker == 0,
                "joined": False,
                "stack": 'File "train.py", line 2 in <module>' if "stack" in command else "",
            }
            return SimpleNamespace(code=0, stdout=json.dumps(data) + "\n", stderr="")
        self.stopped.append(worker)  # stop_job's kill
        return SimpleNamespace(code=0, stdout="", stderr="")


def test_the_guard_ends_the_job_and_reports_when_one_worker_goes_still():
    workers = FakeWorkers()
    guard = StallGuard(workers, Job("script-x"), timeout_s=0.3, poll_s=0.05)  # type: ignore[arg-type]
    with guard:
        guard.line(0, "starting")
        wait_until(lambda: guard.report is not None, timeout=30)
    assert sorted(workers.stopped) == [0, 1]  # the job ended on every worker
    with pytest.raises(WorkersStalled) as raised:
        guard.check()
    assert raised.value.stalled == [1]
    text = raised.value.report
    assert "stalled: w1" in text and "never reached jax.distributed.initialize: w1" in text
    assert "w0's last lines:\n  starting" in text and 'File "train.py"' in text
    assert "w0's stack: train.py:2 in <module>" in raised.value.lines
    assert "w1's Python stack:\n  no stack: its script is suspended" in text
