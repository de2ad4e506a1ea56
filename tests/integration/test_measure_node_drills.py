"""`fit --program --measure --node` on a kept node: the drills the project asks of a new path
(tests/integration/signal_drill.py's rules). A node that is not a kept one of this user's (no
such name; or, by its labels, another's that took the name) is refused with exit 2 before any
SSH; a SIGINT while the step is measured stops the measurement, never the node, and says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import node_state
from tests.integration.iterate_helpers import down, stop_lasting_sandbox, up
from tests.integration.launch_helpers import ZONE, env
from tests.integration.signal_drill import WORKER0, stop_at
from tests.waiting import wait_until
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

pytestmark = pytest.mark.rotating("kept-node-e2e")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ALICE = "a11ce0000000000a"


def fit_on(cwd: Path, program: Path, node: str) -> list[str]:
    return tpuwizard_cmd(
        "fit", "--program", str(program), "--measure", "--node", node, "--sandbox",
        "--slices", "v5litepod-1",
    )  # fmt: skip


def status_of(cwd: Path) -> dict:
    """`status --json` whole: its resources, the kept nodes, others' resources."""
    shown = subprocess.run(
        tpuwizard_cmd("status", "--sandbox", "--json"), cwd=cwd, capture_output=True,
        text=True, timeout=120, env=env(),
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def another_takes_the_name(home: Path, name: str) -> Path:
    """Our kept node is deleted behind tpuwizard's back (the ledger does not hear of it) and
    Alice makes one of hers under its name; returns her worker 0's home. The lasting practice
    cloud is ended first (as when it has gone), so that one server holds the state."""
    info = home / "sandbox" / "server.json"
    pid = int(json.loads(info.read_text())["pid"])
    stop_lasting_sandbox(home)
    wait_until(lambda: not alive(pid), 60, "the practice cloud to stop")
    info.unlink(missing_ok=True)  # ended by a signal: nobody else removes it
    server = make_server(home / "sandbox", delay=0.0)
    start_in_thread(server)
    try:
        cloud = TpuCloud("tpuwizard-practice", endpoint=server.endpoint)
        cloud.delete_node(ZONE, name)
        wait_until(lambda: cloud.node_gone(ZONE, name), 60, "ours to go")
        cloud.create_node(
            NodeRequest(ZONE, name, parse_accelerator("v5litepod-1"), "run-a", owner=ALICE)
        )
        cloud.wait_for_node(ZONE, name, poll=0.05, timeout=30)
    finally:
        server.shutdown()
        server.server_close()
    (w0,) = (home / "sandbox" / "workers").glob(f"*/*/{name}/w0")
    return w0


def test_a_node_that_is_not_this_users_kept_one_is_refused_before_any_ssh(tmp_path, home, project):
    program = project / "mlp_adam.py"
    shutil.copy(EXAMPLES / "mlp_adam.py", program)
    kept = up(tmp_path)
    name = kept["name"]

    unknown = subprocess.run(
        fit_on(tmp_path, program, "nope"), cwd=tmp_path, capture_output=True, text=True,
        timeout=120, env=env(),
    )  # fmt: skip
    assert unknown.returncode == 2, unknown.stderr
    assert f"No kept node called 'nope' (kept: {name})" in unknown.stderr

    theirs = another_takes_the_name(home, name)
    refused = subprocess.run(
        fit_on(tmp_path, program, name), cwd=tmp_path, capture_output=True, text=True,
        timeout=120, env=env(),
    )  # fmt: skip
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2, refused.stderr
    assert f"{name} in {ZONE} is not the node you kept" in said and ALICE in said
    assert "Traceback" not in refused.stderr and "(--measure --node)" not in refused.stderr
    # Nothing reached her VM: no folder copied, no kit, no job (tpuwizard's all live there).
    assert not (theirs / ".tpuwizard").exists(), list(theirs.iterdir())
    # Ours is recorded gone; hers is shown apart and left alone.
    assert Ledger(home / "sandbox" / "ledger.jsonl").open_entries() == []
    shown = status_of(tmp_path)
    assert shown["resources"] == [] and shown["kept"] == []
    assert [(r["name"], r["owner"]) for r in shown["others"]] == [(name, ALICE)]
    gone = subprocess.run(
        tpuwizard_cmd("teardown", name, "--yes", "--other-owner", "--sandbox", "--json"),
        cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env(),
    )  # fmt: skip
    assert gone.returncode == 0, gone.stderr


def test_a_sigint_during_the_measurement_stops_it_and_keeps_the_node(tmp_path, home, project):
    program = project / "mlp_adam.py"
    shutil.copy(EXAMPLES / "mlp_adam.py", program)
    name = up(tmp_path)["name"]
    jobs = WORKER0.format(folder="workers", node=name)

    def measure_job(file: str) -> bool:
        return any(home.glob(f"{jobs}/measure-*/{file}"))

    stopped = stop_at(
        fit_on(tmp_path, program, name),
        tmp_path,
        env(),
        lambda stream, line: False,
        signal.SIGINT,
        lambda: measure_job("pid"),  # the step's job runs on the node
    )
    said = "\n".join(text for stream, text in stopped.lines if stream == "err")
    assert stopped.reached and stopped.code == 130, said
    assert f"Measurement stopped (SIGINT); {name} is kept." in said, said
    wait_until(lambda: measure_job("exit"), 30, "the measurement's job to end on the node")
    assert node_state(home, name) == "READY"
    shown = status_of(tmp_path)
    assert [r["name"] for r in shown["kept"]] == [name], shown
    gone = down(tmp_path, name)
    assert [r["verified"] for r in gone["results"]] == [True]
