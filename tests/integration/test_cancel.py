"""Cancel means now: a stop signal during the user's script deletes at once, and nothing of
ours (follower, job, watchdog) outlives the run. Real signals to a real `tpuwizard launch`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env, launch, ledger_all_gone, sandbox_is_empty
from tests.waiting import wait_until

LONG = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"


def processes_mentioning(marker: str) -> list[str]:
    """Command lines of live processes that mention ``marker`` (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = (proc / "status").read_text()
        except OSError:
            continue
        if marker in cmdline and "State:\tZ" not in status and str(os.getpid()) != proc.name:
            found.append(cmdline)
    return found


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_during_the_script_deletes_at_once(tmp_path, home, sig):
    script = tmp_path / f"long_{sig.name.lower()}.py"
    script.write_text(LONG)
    err = (tmp_path / "stderr.txt").open("w")
    proc = subprocess.Popen(
        tpuwizard_cmd(
            "launch",
            "--sandbox",
            "--json",
            "--zone",
            ZONE,
            "--accelerator",
            "v5litepod-1",
            "--script",
            str(script),
        ),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=env(),
    )
    assert proc.stdout is not None
    times: dict[str, float] = {}
    finished = None
    sent_at = None
    for line in proc.stdout:
        event = json.loads(line)
        times.setdefault(event["event"], time.monotonic())
        finished = event if event["event"] == "finished" else finished
        if sent_at is None and event["event"] == "script_line" and "tick 1" in event["text"]:
            sent_at = time.monotonic()
            proc.send_signal(sig)
    code = proc.wait(timeout=60)
    exited = time.monotonic()
    assert sent_at is not None, "the script never started"
    assert code == 128 + sig
    # The code it exits with is the one it says: in the finished event and the summary's end.
    err.close()
    summary = (tmp_path / "stderr.txt").read_text()
    assert finished is not None and finished["exit_code"] == code
    assert summary.rstrip().splitlines()[-1].startswith(f"  Exit code {code}. Run folder:")
    delete_issued = times["teardown_started"] - sent_at
    assert delete_issued < 2.0, f"delete issued {delete_issued:.2f} s after the signal"
    assert exited - sent_at < 20, "the exit waited for something after the delete"
    assert "teardown_verified" in times
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    # The job on the worker and every follower are gone with the run.
    wait_until(lambda: not processes_mentioning(script.name), 30, f"{script.name} to end")


def test_a_practice_watchdog_does_not_outlive_its_node(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--watchdog", "--max-run", "30"
    )
    assert code == 0, stderr
    armed = next(e for e in events if e["event"] == "watchdog")
    assert armed["armed"], armed["detail"]
    name = next(e for e in events if e["event"] == "planned")["name"]
    assert sandbox_is_empty(home)
    wait_until(lambda: not processes_mentioning(f"nodes/{name}"), 30, "the watchdog to end")
