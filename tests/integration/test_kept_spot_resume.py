"""`up --route spot`, then `run --checkpoints`, end to end in the sandbox (issue 28): Google
preempts the kept node once worker 0 holds three committed sets (fault preempt_on), the run
makes a new kept node from up's settings, puts the set that came home back, and the script
resumes and ends bit for bit where an uninterrupted run ends; `down` then verifies everything
gone. And a SIGKILL of `run` while it makes the new node (its intent in the ledger): `teardown
--all` finds everything. The rest (settings, ledger order, what the old name says) is proved in
memory by tests/unit/test_kept_resume.py."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.iterate_helpers import (
    down,
    json_events,
    read_until,
    run,
    start,
    up,
)
from tests.integration.launch_helpers import ledger_all_gone, sandbox_is_empty, teardown_all
from tests.integration.test_spot_recovery_kill import PREEMPT_ONCE
from tests.integration.test_spot_resume import ARGS, EXAMPLE, uninterrupted_final_line

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("resume-e2e")

FAST = {"TPUWIZARD_SANDBOX_DELAY": "0.05", "TPUWIZARD_SANDBOX_FAULTS": PREEMPT_ONCE}
RESUMABLE = ("--json", "--checkpoints", "ckpt", "--checkpoint-every", "1s")


@pytest.fixture
def project(project):
    """The shared script folder (tests/integration/conftest.py), holding the example."""
    shutil.copy(EXAMPLE, project / "train.py")
    return project


def test_a_preempted_kept_node_is_replaced_and_the_run_resumes_bit_for_bit(tmp_path, home, project):
    kept = up(tmp_path, "--route", "spot", **FAST)
    # The rehearsal's faults are each command's own: run asks for them too.
    done = run(tmp_path, *RESUMABLE, str(project / "train.py"), *ARGS, timeout=300, **FAST)
    events = json_events(done.stdout)
    kinds = [e["event"] for e in events]
    assert done.returncode == 0, (done.stderr, kinds)
    assert kinds.count("preempted") == 1 and kinds.count("kept_replaced") == 1
    assert kinds.index("preempted") < kinds.index("recreating") < kinds.index("resumed")
    replaced = next(e for e in events if e["event"] == "kept_replaced")
    assert replaced["old_name"] == kept["node"] and replaced["new_name"] != kept["node"]
    assert f"{replaced['new_name']} is kept in place of {kept['node']}" in done.stderr
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines[-1] == uninterrupted_final_line()
    resumed = next(e for e in events if e["event"] == "resumed")
    assert resumed["checkpoint"] is not None and f"resume: from step {resumed['step']}" in lines
    chain_file = tmp_path / "runs" / events[0]["run_id"] / "chain.json"
    chain = json.loads(chain_file.read_text())
    assert [a["ended"] for a in chain["attempts"]] == ["preempted", "finished"]
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(chain_file)), capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    gone = down(tmp_path, replaced["new_name"])
    assert gone and sandbox_is_empty(home) and ledger_all_gone(home)


def test_a_kill_of_run_while_it_makes_the_new_node_leaves_nothing_teardown_misses(
    tmp_path, home, project
):
    up(tmp_path, "--route", "spot", **FAST)
    proc = start(tmp_path, "run", *RESUMABLE, str(project / "train.py"), *ARGS, **FAST)
    seen: list[str] = []
    # The new node's intent is in the ledger: the create is under way.
    read_until(proc, lambda line: '"event": "resource_exists"' in line, seen)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert any('"event": "recreating"' in line for line in seen)
    cleaned = teardown_all(tmp_path)
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)
