"""SIGKILL a launch at every stage: status shows what is left, teardown --all removes it all."""

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.drill_backends import sandbox_names
from tests.integration.launch_helpers import (
    launch_until,
    launch_until_on_disk,
    ledger_all_gone,
    ledger_holds,
    names,
    sandbox_is_empty,
    status,
    teardown_all,
)
from tests.rotation import rotating
from tpuwizard.core.launch.records.ledger import Ledger

STAGES = {
    "while creating": lambda e: e["event"] == "provisioning" and e["state"] == "CREATING",
    "after ready": lambda e: e["event"] == "ready",
    "during bootstrap": lambda e: e["event"] in ("bootstrap_line", "versions"),
    "during the verifier": lambda e: e["event"] == "check",
    "during teardown": lambda e: e["event"] == "teardown_started",
}


def test_sigkill_once_the_intent_is_on_disk_then_recover(tmp_path, home):
    # No event marks this point (the planned event comes before the write): watch the file. Every
    # API request of this launch waits 1.5 s, so the kill lands before the create is carried out.
    code, _ = launch_until_on_disk(
        tmp_path,
        lambda: ledger_holds(home, "intent"),
        "--accelerator",
        "v5litepod-4",
        TPUWIZARD_SANDBOX_FAULTS="latency_ms=1500",
    )
    assert code == -signal.SIGKILL
    assert sandbox_is_empty(home)  # written ahead: the intent is there, the node is not
    assert [e.op for e in Ledger(home / "sandbox" / "ledger.jsonl").entries()] == ["intent"]
    # status finds nothing behind the intent, says so and closes it.
    assert status(tmp_path) == []
    assert ledger_all_gone(home)
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)


@pytest.mark.parametrize("stage", rotating(list(STAGES), per_run=1))
def test_sigkill_then_recover(tmp_path, stage):
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, _ = launch_until(tmp_path, STAGES[stage], "--accelerator", "v5litepod-4")
    assert code == -signal.SIGKILL
    left = status(tmp_path)
    if stage in ("after ready", "during bootstrap", "during the verifier"):
        # The node surely exists: status must show it, from the ledger and its labels.
        assert [r["state"] for r in left] == ["READY"]
        assert left[0]["source"] == "ledger+labels"
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == []
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_sigterm_tears_down_then_exits_143(tmp_path):
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, seen = launch_until(
        tmp_path,
        lambda e: e["event"] == "ready",
        "--accelerator",
        "v5litepod-1",
        sig=signal.SIGTERM,
    )
    assert code == 128 + signal.SIGTERM
    kinds = names(seen)
    assert "teardown_verified" in kinds and kinds[-1] == "finished"
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_sigint_while_creating_tears_down(tmp_path):
    home = Path(os.environ["TPUWIZARD_HOME"])
    code, seen = launch_until(
        tmp_path,
        lambda e: e["event"] == "provisioning",
        "--accelerator",
        "v5litepod-1",
        sig=signal.SIGINT,
        TPUWIZARD_SANDBOX_DELAY="3",
    )
    assert code == 128 + signal.SIGINT
    assert seen[-1]["event"] == "finished" and seen[-1]["exit_code"] == code, "says its exit"
    assert "teardown_verified" in names(seen)
    assert sandbox_is_empty(home) and ledger_all_gone(home)


# The first PROVISIONING comes once the insert is answered: the instance exists from then on.
COMPUTE_STAGES = {
    "while provisioning": lambda e: e["event"] == "provisioning",
    "after ready": lambda e: e["event"] == "ready",
}


@pytest.mark.parametrize("stage", rotating(list(COMPUTE_STAGES), per_run=1))
def test_sigkill_a_compute_launch_once_its_instance_exists_then_recover(tmp_path, home, stage):
    code, seen = launch_until(
        tmp_path,
        COMPUTE_STAGES[stage],
        "--backend",
        "compute",
        "--accelerator",
        "v6e-4",
        zone="us-east5-b",
    )
    assert code == -signal.SIGKILL
    name = seen[0]["name"]
    assert sandbox_names(home) == {name}  # an instance, which `sandbox_is_empty` also reads
    left = status(tmp_path)
    assert [(r["name"], r["backend"], r["source"]) for r in left] == [
        (name, "compute", "ledger+labels")
    ]
    shown = subprocess.run(
        tpuwizard_cmd("status", "--sandbox"), cwd=tmp_path, capture_output=True, text=True
    )
    assert shown.returncode == 0 and "backend: compute" in shown.stdout, shown.stdout
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [(r["name"], r["verified"]) for r in json.loads(proc.stdout)["results"]] == [
        (name, True)
    ]
    assert status(tmp_path) == []
    assert sandbox_names(home) == set() and sandbox_is_empty(home) and ledger_all_gone(home)
