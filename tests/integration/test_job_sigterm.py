"""A SIGTERM sent to a job's wrapper reaches the user's script (issue 47 item 5): the script's
handler runs, its own exit code is the job's, and the job says a SIGTERM came."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from tests.waiting import wait_until
from tpuwizard.core.launch.workers.distributed import LAUNCHER_PATH, launcher_source
from tpuwizard.core.launch.workers.jobs import ScriptJob
from tpuwizard.core.remote.jobs import Job, follow_job, got_sigterm, start_job, stop_job
from tpuwizard.core.remote.transports import LocalTransport

SCRIPT = """
import signal, sys, time
def on_term(signum, frame):
    open("saved.txt", "w").write("saved on SIGTERM")
    sys.exit(7)
signal.signal(signal.SIGTERM, on_term)
open("ready", "w").write("")
print("waiting", flush=True)
time.sleep(60)
print("never woken")
"""


def test_a_sigterm_to_the_wrapper_runs_the_scripts_handler(tmp_path: Path) -> None:
    home = tmp_path / "w0"
    (home / "work").mkdir(parents=True)
    (home / "work" / "main.py").write_text(SCRIPT)
    transport = LocalTransport([home])
    job = Job("script-sig")
    script = ScriptJob(job, "work", sys.executable, "main.py", (), None)
    # Every script starts through the launcher, as a launch uploads it (verify/tpu_launch.py).
    transport.upload(0, launcher_source().encode(), LAUNCHER_PATH)
    try:
        start_job(transport, 0, job, script.command())
        wait_until(lambda: (home / "work" / "ready").exists(), 30, "the script to start")
        assert not got_sigterm(transport, 0, job)
        wrapper = int((home / job.folder / "pid").read_text())
        os.kill(wrapper, signal.SIGTERM)  # the wrapper alone, not its group
        # Without the pass-on the wrapper dies of it and no exit code is ever written.
        wait_until(lambda: (home / job.folder / "exit").exists(), 30, "the job's exit code")
        lines: list[str] = []
        code = follow_job(transport, 0, job, lines.append)
        assert code == 7  # the script's own exit code, from its handler
        assert (home / "work" / "saved.txt").read_text() == "saved on SIGTERM"
        assert got_sigterm(transport, 0, job)
        assert "never woken" not in lines
    finally:
        stop_job(transport, 0, job)  # a failed run leaves no script behind
