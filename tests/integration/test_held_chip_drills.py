"""A held chip found before a run on a kept node, in practice (issue 54, item 3): the sandbox's
held_chip fault leaves a process holding worker 0's chip (its stand-in file, dev/accel0), and
`run` and `watch` list it before anything is copied: another's refuses the run unless
--even-if-held; one an earlier run of tpuwizard's left is ended, and the run goes on."""

from __future__ import annotations

import json
import os
import signal

import pytest

from tests.integration.iterate_helpers import json_events, read_until, run, start, up

pytestmark = pytest.mark.rotating("kept-node-e2e")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_run_refuses_a_chip_another_process_holds_until_asked_to_go_on(tmp_path, home, project):
    script = project / "train.py"
    script.write_text("print('ran', flush=True)\n")
    # The lasting practice cloud takes its faults when it starts: up's; the process holds the
    # chip from the node's boot on, as one started by hand over SSH would.
    kept = up(tmp_path, TPUWIZARD_SANDBOX_FAULTS="held_chip=other")
    refused = run(tmp_path, str(script))
    assert refused.returncode == 1, refused.stderr
    err = refused.stderr
    assert f"{kept['name']}'s TPU is held by a process tpuwizard did not start" in err
    assert "Nothing was copied or started" in err and "--even-if-held" in err
    pid = int(err.split("worker 0: process ")[1].split(" ")[0])
    assert f"--worker 0, then kill {pid}" in err and alive(pid)
    assert "ran" not in refused.stdout
    work = next(home.glob("sandbox/workers/*/*/*/w0"))
    assert not (work / ".tpuwizard" / "work" / "train.py").exists()  # nothing was copied

    going = run(tmp_path, "--json", "--even-if-held", str(script))
    assert going.returncode == 0, going.stderr
    events = json_events(going.stdout)
    said = [e for e in events if e["event"] == "chip_held_going_on"]
    assert [(e["worker"], e["pid"]) for e in said] == [(0, pid)]
    assert any(e["event"] == "script_line" and e["text"] == "ran" for e in events)
    assert alive(pid)  # not tpuwizard's to end


def test_watch_ends_what_an_earlier_run_left_holding_the_chip(tmp_path, home, project):
    script = project / "train.py"
    script.write_text("print('ran', flush=True)\n")
    up(tmp_path, TPUWIZARD_SANDBOX_FAULTS="held_chip=ours")
    proc = start(tmp_path, "watch", "--json", str(script))
    seen: list[str] = []
    try:
        read_until(proc, lambda line: '"text": "ran"' in line, seen)
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    events = [json.loads(line) for line in seen]
    names = [e["event"] for e in events]
    ended = events[names.index("chip_holder_ended")]
    assert ended["job"] == "run-practice-left-behind" and ended["worker"] == 0
    assert names.index("chip_holder_ended") < names.index("run_started")  # before anything ran
    assert not alive(ended["pid"])
