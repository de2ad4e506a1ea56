"""A whole practice launch on Compute Engine with no route off this machine.

google-cloud-compute's extended operations poll Google's default endpoint whatever the client was
given (reference/compute-engine.md, the trap). Inside `unshare -rn` with only loopback up any
such call fails; but a create whose answer is lost is checked with a get and carried on, so the
launch could still end 0. Hence an audit hook in every Python process of the launch (the CLI,
the practice cloud) writes down each name looked up and each address connected to that is not
this machine's: the launch must end 0, verified gone, with that list empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import clean_env
from tests.integration.drill_backends import sandbox_names
from tests.integration.launch_helpers import ledger_all_gone, sandbox_is_empty

# sitecustomize: imported by every interpreter started with this folder on PYTHONPATH.
AUDIT = """
import os, sys

def _off_machine(event, args):
    if event == "socket.getaddrinfo":
        host = args[0]
    elif event == "socket.connect" and isinstance(args[1], tuple):
        host = args[1][0]  # (a path is a Unix socket: this machine's)
    else:
        return
    host = host.decode() if isinstance(host, bytes) else host
    if host and not str(host).startswith(("127.", "localhost", "::1")):
        with open(os.environ["OFFLINE_AUDIT_LOG"], "a") as log:
            log.write(f"{os.getpid()} {event} {host}\\n")

if os.environ.get("OFFLINE_AUDIT_LOG"):
    sys.addaudithook(_off_machine)
"""

SCRIPT = """
set -u
ip link set lo up
# The audit's own check: a look-up of Google's name is written down (and fails here).
OFFLINE_AUDIT_LOG="$PWD/control.log" "$PY" -c "import socket
try: socket.getaddrinfo('compute.googleapis.com', 443)
except OSError: pass"
export OFFLINE_AUDIT_LOG="$PWD/audit.log"
"$PY" -m tpuwizard launch --sandbox --json --backend compute --accelerator "$ACCELERATOR" \\
    --zone us-east5-b --run-dir runs > events.jsonl 2> launch.err
echo "launch exit $?"
"$PY" -m tpuwizard status --sandbox --json > status.json 2> status.err
echo "status exit $?"
"""


@pytest.mark.parametrize("accelerator", ["v6e-4"])
def test_a_compute_practice_launch_runs_and_tears_down_with_no_route_off_this_machine(
    tmp_path, home, accelerator
):
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare or ip is not installed")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted here")
    (tmp_path / "audit").mkdir()
    (tmp_path / "audit" / "sitecustomize.py").write_text(AUDIT)
    path = os.pathsep.join(p for p in (str(tmp_path / "audit"), os.environ.get("PYTHONPATH")) if p)
    environ = clean_env(
        PY=sys.executable, ACCELERATOR=accelerator, TPUWIZARD_SANDBOX_LINGER="2", PYTHONPATH=path
    )
    for key in ("TPUWIZARD_TPU_ENDPOINT", "TPUWIZARD_SANDBOX_TOKEN", "TPUWIZARD_COMPUTE_ENDPOINT"):
        environ.pop(key, None)
    (tmp_path / "offline.sh").write_text(SCRIPT)
    done = subprocess.run(
        ["unshare", "-rn", "bash", "offline.sh"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    said = done.stdout + done.stderr + (tmp_path / "launch.err").read_text()
    assert "launch exit 0" in done.stdout and "status exit 0" in done.stdout, said
    assert "getaddrinfo compute.googleapis.com" in (tmp_path / "control.log").read_text()
    audit = tmp_path / "audit.log"
    assert not audit.exists(), f"calls meant to leave this machine:\n{audit.read_text()}"
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    kinds = [e["event"] for e in events]
    name = events[0]["name"]
    assert events[0]["accelerator"] == accelerator and "ready" in kinds, kinds
    assert [e["name"] for e in events if e["event"] == "teardown_verified"] == [name]
    assert events[-1]["event"] == "finished" and events[-1]["exit_code"] == 0
    assert json.loads((tmp_path / "status.json").read_text())["resources"] == []
    assert sandbox_names(home) == set() and sandbox_is_empty(home) and ledger_all_gone(home)
    operations = json.loads((home / "sandbox" / "state.json").read_text())["zone_operations"]
    kinds_done = sorted(op["operationType"] for op in operations.values())
    assert kinds_done == ["delete", "insert"]  # it was Compute Engine's sandbox that served it
