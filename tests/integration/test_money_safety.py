"""Deadlines that hold when the laptop does not, queued resources never abandoned, preemption."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import (
    env,
    launch,
    launch_until,
    ledger_all_gone,
    names,
    sandbox_is_empty,
    status,
    teardown_all,
)
from tests.waiting import wait_until
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT


@pytest.fixture
def standalone_sandbox(tmp_path, monkeypatch):
    """A sandbox in its own process, so it outlives a killed wizard; its token is exported to
    this test and the commands it runs, as a user exports the lines `sandbox serve` prints."""
    proc = subprocess.Popen(
        tpuwizard_cmd("sandbox", "serve", "--delay", "0.5"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env(),
    )
    exported = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(2))
    monkeypatch.setenv("TPUWIZARD_SANDBOX_TOKEN", exported["TPUWIZARD_SANDBOX_TOKEN"])
    yield exported["TPUWIZARD_TPU_ENDPOINT"]
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)  # it ends its nodes' VM processes first: slow on a loaded machine


def test_the_watchdog_deletes_the_node_at_its_deadline_with_the_wizard_killed(
    tmp_path, home, standalone_sandbox
):
    code, seen = launch_until(
        tmp_path,
        lambda e: e["event"] == "watchdog",
        "--accelerator",
        "v5litepod-1",
        "--watchdog",
        "--max-run",
        "0.3",
        TPUWIZARD_TPU_ENDPOINT=standalone_sandbox,
    )
    assert code == -signal.SIGKILL
    armed = next(e for e in seen if e["event"] == "watchdog")
    assert armed["armed"], armed["detail"]
    name = next(e for e in seen if e["event"] == "planned")["name"]
    cloud = TpuCloud(PRACTICE_PROJECT, endpoint=standalone_sandbox)
    assert cloud.get_node("us-central1-a", name) is not None  # the wizard is dead; it bills
    deadline = armed["deadline"]
    wait_until(lambda: cloud.get_node("us-central1-a", name) is None, 40, "the watchdog's delete")
    assert cloud.node_gone("us-central1-a", name)
    assert time.time() >= deadline - 0.5  # deleted at the deadline, not before
    assert status(tmp_path, TPUWIZARD_TPU_ENDPOINT=standalone_sandbox) == []
    assert ledger_all_gone(home)


def test_a_watchdog_that_may_not_delete_says_what_to_grant(tmp_path, home):
    # The policy is unreadable, so the check before create cannot tell: the watchdog is armed by
    # default and its own check on the VM finds that it may not delete.
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        TPUWIZARD_SANDBOX_FAULTS="sa_no_delete=1;policy_unreadable=1",
    )
    assert code == 0, stderr
    assert "Watchdog on: the project's IAM policy could not be read" in stderr
    watchdog = next(e for e in events if e["event"] == "watchdog")
    assert not watchdog["armed"]
    assert "tpu.nodes.delete" in watchdog["detail"] and "roles/tpu.admin" in watchdog["detail"]
    assert sandbox_is_empty(home)


def test_watchdog_asked_for_without_act_as_exits_2_before_any_create(tmp_path, home):
    # The create would attach the VM's account, which the caller may not: Google would answer
    # 403. The plan's own rule refuses it first, with every way on, in the CLI's words.
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--watchdog",
        TPUWIZARD_SANDBOX_FAULTS="no_act_as=1",
    )
    assert code == 2, stderr
    assert "The watchdog cannot run: you may not attach its service account" in stderr
    assert "--no-watchdog" in stderr and "--service-account EMAIL" in stderr
    assert "roles/iam.serviceAccountUser" in stderr
    assert events == []  # not even Planned: nothing was asked of the cloud
    assert not (home / "sandbox" / "ledger.jsonl").exists() and sandbox_is_empty(home)


def test_without_act_as_the_first_create_is_not_a_403(tmp_path, home):
    # Attaching the account the watchdog needs would be refused (403): the check says so first,
    # the watchdog stays off, and the create (with no account attached) goes through.
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", TPUWIZARD_SANDBOX_FAULTS="no_act_as=1"
    )
    assert code == 0, stderr
    assert "Watchdog off: you may not attach the service account" in stderr
    assert "roles/iam.serviceAccountUser" in stderr
    assert "watchdog" not in names(events) and "finished" in names(events)
    assert sandbox_is_empty(home)


def test_practice_launch_arms_the_watchdog_by_default(tmp_path, home):
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-1")
    assert code == 0, stderr
    assert "even if this laptop sleeps" in stderr
    watchdog = next(e for e in events if e["event"] == "watchdog")
    assert watchdog["armed"], watchdog
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_watchdog_is_refused_for_flex_which_has_its_own_deadline(tmp_path):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--route", "flex", "--watchdog"
    )
    assert code == 2 and "maxRunDuration" in stderr and events == []


def test_spot_preemption_is_explained_deleted_and_a_relaunch_suggested(tmp_path, home):
    code, events, _ = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--route",
        "spot",
        TPUWIZARD_SANDBOX_FAULTS="preempt_after=1",
    )
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["diagnosis"]["kind"] == "preempted", failed
    assert any("Relaunch" in step for step in failed["diagnosis"]["next_steps"])
    # Google took the node away: a cloud event (3), not a failed verification (1).
    assert "teardown_verified" in names(events) and code == 3
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    # Its VMs vanished with their processes: the watchdog armed on worker 0 did not live on.
    workers = str(home / "sandbox" / "workers")
    wait_until(lambda: processes_under(workers) == [], 30, "the workers' processes gone")


def processes_under(folder: str) -> list[int]:
    """Processes whose working directory is inside ``folder`` (Linux /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:  # gone, a zombie, or not ours to read
            continue
        if cwd.startswith(folder):
            found.append(int(pid))
    return found


def test_a_queued_request_that_times_out_is_deleted_not_abandoned(tmp_path, home):
    code, events, _ = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--route",
        "spot",
        "--ready-timeout",
        "2",
        TPUWIZARD_SANDBOX_FAULTS="stockout=us-central1-a",
    )
    assert code == 3
    verified = next(e for e in events if e["event"] == "teardown_verified")
    assert verified["kind"] == "queued"
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_suspended_flex_requests_are_listed_and_removed(tmp_path, home):
    from tpuwizard.core import paths
    from tpuwizard.sandbox.server import make_server
    from tpuwizard.sandbox.serving import start_in_thread

    server = make_server(home / "sandbox", delay=0.2)
    start_in_thread(server)
    cloud = TpuCloud(PRACTICE_PROJECT, endpoint=server.endpoint)
    cloud.create_queued(
        NodeRequest(
            zone="us-central1-a",
            node_id="flex-node",
            slice=parse_accelerator("v5litepod-4"),
            run_id="r1",
            owner=paths.owner_label(),  # made by this install (a crashed run of its own)
        ),
        "flex-qr",
        "flex",
        max_run_seconds=1,
    )
    cloud.wait_for_queued("us-central1-a", "flex-qr", poll=0.05)
    wait_until(
        lambda: cloud.get_queued("us-central1-a", "flex-qr").state == "SUSPENDED",
        30,
        "the end of the 1 s run",
    )
    server.shutdown()
    server.server_close()
    listed = status(tmp_path)
    assert [(r["name"], r["state"], r["kind"]) for r in listed] == [
        ("flex-qr", "SUSPENDED", "queued")
    ]
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert status(tmp_path) == [] and sandbox_is_empty(home)


def test_the_run_folder_holds_the_cost_estimate(tmp_path):
    code, events, _ = launch(tmp_path, "--accelerator", "v5litepod-1")
    assert code == 0
    run_dir = Path(next(e for e in events if e["event"] == "finished")["run_dir"])
    spent = json.loads((run_dir / "cost.json").read_text())
    assert spent["route"] == "vm" and spent["practice"] is True
    assert spent["price_per_hour_usd"] == 1.2 and spent["seconds"] > 0
