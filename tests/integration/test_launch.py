"""`tpuwizard launch` end to end against the sandbox: real client, real shell, real JAX."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import (
    env,
    launch,
    ledger_all_gone,
    names,
    sandbox_is_empty,
    status,
    teardown_all,
)


def test_launch_verifies_saves_the_receipt_and_leaves_nothing(tmp_path, home):
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-4")
    assert code == 0, stderr
    kinds = names(events)
    assert all("event" in e for e in events)
    for expected in (
        "planned",
        "provisioning",
        "ready",
        "ssh_ready",
        "versions",
        "check",
        "receipt_saved",
        "teardown_started",
        "teardown_verified",
        "finished",
    ):
        assert expected in kinds, expected
    assert kinds.index("receipt_saved") < kinds.index("teardown_started")
    states = [e["state"] for e in events if e["event"] == "provisioning"]
    assert states[0] == "CREATING" and states[-1] == "READY"
    checks = {e["name"]: e["ok"] for e in events if e["event"] == "check"}
    assert checks["contract"] and checks["numeric"] and all(checks.values())
    saved = next(e for e in events if e["event"] == "receipt_saved")
    receipt = Path(saved["path"])
    assert receipt.parent.parent == tmp_path / "runs" and saved["ok"]
    data = json.loads(receipt.read_text())
    assert data["expected_backend"] == "cpu" and data["device_count"] == 4  # practice says cpu
    checked = subprocess.run(
        tpuwizard_cmd(
            "receipt", "check", str(receipt), "--expect", "cpu", "--accelerator", "v5litepod-4"
        ),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    assert events[-1] == {**events[-1], "event": "finished", "ok": True, "exit_code": 0}
    spent = json.loads((receipt.parent / "cost.json").read_text())
    assert spent["accelerator"] == "v5litepod-4" and spent["chips"] == 4
    assert spent["cost_usd"] is not None and "estimate" in spent["estimate"]
    assert "[practice]" in stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)
    assert status(tmp_path) == []


def test_a_script_runs_and_its_reports_come_back(tmp_path, home):
    script = tmp_path / "experiment.py"
    script.write_text(
        "import jax, jax.numpy as jnp, pathlib\n"
        "print('devices', jax.device_count())\n"
        "pathlib.Path('reports').mkdir()\n"
        "pathlib.Path('reports/result.txt').write_text(str(float(jnp.arange(4.0).sum())))\n"
    )
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-8",
        "--script",
        str(script),
        "--fetch",
        "reports/*.txt",
    )
    assert code == 0, stderr
    lines = [e["text"] for e in events if e["event"] == "script_line"]
    assert lines == ["devices 8"]
    fetched = [e["path"] for e in events if e["event"] == "file_fetched"]
    assert len(fetched) == 1 and Path(fetched[0]).read_text() == "6.0"
    assert sandbox_is_empty(home)


def test_one_odd_output_never_costs_the_others(tmp_path, home):
    script = tmp_path / "outputs.py"
    script.write_text(
        "import os, pathlib\n"
        "out = pathlib.Path('out')\n"
        "out.mkdir()\n"
        "(out / 'a.txt').write_text('a')\n"
        "(out / 'with space.txt').write_text('space')\n"
        "(out / 'new\\nline.txt').write_text('newline')\n"
        "(out / 'folder.txt').mkdir()\n"
        "os.symlink('/nonexistent/target', out / 'dangling.txt')\n"
        "os.symlink('/etc/hostname', out / 'outside.txt')\n"
        "(out / 'z.txt').write_text('z')\n"
    )
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--script", str(script), "--fetch", "out/*.txt"
    )
    assert code == 0, stderr
    fetched = {
        Path(e["path"]).name: Path(e["path"]).read_text()
        for e in events
        if e["event"] == "file_fetched"
    }
    assert fetched == {
        "a.txt": "a",
        "with space.txt": "space",
        "new\nline.txt": "newline",
        "z.txt": "z",
    }
    skipped = {e["path"]: e["reason"] for e in events if e["event"] == "file_not_fetched"}
    assert set(skipped) == {"out/folder.txt", "out/dangling.txt", "out/outside.txt"}
    assert "directory" in skipped["out/folder.txt"]
    run_dir = Path(next(e for e in events if e["event"] == "planned")["run_dir"])
    assert all(p.resolve().is_relative_to(run_dir.resolve()) for p in run_dir.rglob("*"))
    assert sandbox_is_empty(home)


def test_a_failing_script_still_tears_down(tmp_path, home):
    script = tmp_path / "broken.py"
    script.write_text("raise SystemExit(7)\n")
    code, events, stderr = launch(tmp_path, "--accelerator", "v5litepod-1", "--script", str(script))
    assert code == 1
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["stage"] == "script" and "code 7" in failed["diagnosis"]["explanation"]
    # The user's own script failed: its output is the lead, not SSH or OS Login advice.
    assert failed["diagnosis"]["kind"] == "script_failed"
    advice = "\n".join(x for x in stderr.splitlines() if not x.startswith("Preflight: "))
    assert "SSH" not in json.dumps(failed["diagnosis"]) and "OS Login" not in advice
    (finished,) = [e for e in events if e["event"] == "script_finished"]
    assert finished["exit_code"] == 7 and finished["output"].endswith("output.txt")
    assert "teardown_verified" in names(events) and sandbox_is_empty(home)
    # The summary comes last (on stderr beside --json): the checks, the script, the bill.
    summary = stderr[stderr.index("Summary of tpuwizard-") :]
    assert "PASS contract" in summary and "FAIL" not in summary
    assert (
        "Your script: exit 7." in summary and "Failed during script: Your script failed" in summary
    )
    assert "Nothing is billing." in summary and "Exit code 1." in summary
    assert "Kept:" not in stderr  # nothing kept, nothing said


def test_keep_leaves_it_running_until_teardown(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--keep", "--name", "kept-node"
    )
    assert code == 0 and "kept" in names(events) and "teardown_started" not in names(events)
    # After the launch (on stderr beside --json): it is kept, what it costs, how to end it.
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("[practice] Kept: kept-node (v5litepod-1) in ") and "$" in last
    assert last.endswith("End it with: tpuwizard down --sandbox kept-node.")
    listed = status(tmp_path)
    assert [(r["name"], r["state"], r["accelerator"]) for r in listed] == [
        ("kept-node", "READY", "v5litepod-1")
    ]
    assert listed[0]["cost_usd"] is not None
    proc = subprocess.run(
        tpuwizard_cmd("teardown", "kept-node", "--yes", "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Kept:" not in proc.stderr  # the last kept node is gone: no line
    assert status(tmp_path) == [] and sandbox_is_empty(home) and ledger_all_gone(home)


@pytest.mark.parametrize("route", ["spot", "flex"])
def test_queued_routes_end_with_the_request_deleted(tmp_path, home, route):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-4", "--route", route, "--max-run", "30"
    )
    assert code == 0, stderr
    verified = next(e for e in events if e["event"] == "teardown_verified")
    assert verified["kind"] == "queued"
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_stockout_with_failover_moves_zone(tmp_path, home):
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-4",
        "--failover",
        TPUWIZARD_SANDBOX_FAULTS="stockout=us-central1-a",
    )
    assert code == 0, stderr
    move = next(e for e in events if e["event"] == "zone_failover")
    assert move["from_zone"] == "us-central1-a" and move["to_zone"] != "us-central1-a"
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_stockout_without_failover_is_diagnosed_and_leaves_nothing(tmp_path, home):
    code, events, _ = launch(
        tmp_path, "--accelerator", "v5litepod-4", TPUWIZARD_SANDBOX_FAULTS="stockout=us-central1-a"
    )
    assert code == 3
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["diagnosis"]["kind"] == "stockout"
    assert "us-west1-c" in failed["diagnosis"]["alternatives"]
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_503s_on_create_are_checked_then_retried(tmp_path, home):
    # Without the preflight, whose own reads would meet the 503s before the create does.
    code, _, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--no-preflight",
        TPUWIZARD_SANDBOX_FAULTS="unavailable=2",
    )
    assert code == 0, stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def sandbox_operations(home: Path, verb: str) -> int:
    state = json.loads((home / "sandbox" / "state.json").read_text())
    return sum(op["metadata"]["verb"] == verb for op in state["operations"].values())


def test_a_lost_create_answer_is_found_by_get_and_not_created_twice(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", TPUWIZARD_SANDBOX_FAULTS="lost_create=1"
    )
    assert code == 0, stderr
    assert "teardown_verified" in names(events)
    assert sandbox_operations(home, "create") == 1
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_a_lying_delete_is_retried_and_only_then_recorded_gone(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", TPUWIZARD_SANDBOX_FAULTS="lying_delete=1"
    )
    assert code == 0, stderr
    assert "teardown_verified" in names(events) and "teardown_failed" not in names(events)
    assert sandbox_operations(home, "delete") == 2
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_never_ready_times_out_and_cleans_up(tmp_path, home):
    code, events, _ = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-1",
        "--ready-timeout",
        "2",
        TPUWIZARD_SANDBOX_FAULTS="never_ready=1",
    )
    assert code == 3
    assert next(e for e in events if e["event"] == "failed")["diagnosis"]["kind"] == "timeout"
    assert "teardown_verified" in names(events)
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_a_delete_that_keeps_failing_exits_4_and_is_recoverable(tmp_path, home):
    code, events, _ = launch(
        tmp_path, "--accelerator", "v5litepod-1", TPUWIZARD_SANDBOX_FAULTS="delete_fail=10"
    )
    assert code == 4
    assert "teardown_failed" in names(events)
    assert [r["state"] for r in status(tmp_path)] == ["READY"]
    proc = teardown_all(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_bad_input_exits_2_before_anything_is_created(tmp_path, home):
    for args in (
        ["--accelerator", "v5e-4"],
        ["--accelerator", "v4-4"],
        ["--accelerator", "v5litepod-4", "--name", "Bad_Name"],
        ["--accelerator", "v5litepod-4", "--max-run", "0"],
        ["--accelerator", "v5litepod-4", "--script", "missing.py"],
    ):
        code, events, stderr = launch(tmp_path, *args)
        assert code == 2 and events == [], stderr
        assert "Traceback" not in stderr
    assert not (home / "sandbox" / "ledger.jsonl").exists()


@pytest.mark.rotating("deep-checks-e2e")
def test_precision_and_trace_come_back_into_the_run_folder(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-1", "--precision", "--trace"
    )
    assert code == 0, stderr
    checks = {e["name"]: e["ok"] for e in events if e["event"] == "check"}
    assert checks["precision"] and checks["trace"]
    saved = next(e for e in events if e["event"] == "receipt_saved")
    receipt = Path(saved["path"])
    data = json.loads(receipt.read_text())
    assert data["precision"]["int8"]["max_rel_error"] > data["precision"]["bf16"]["max_rel_error"]
    assert data["trace"]["dir"] == "trace" and data["trace"]["files"]
    fetched = {e["path"] for e in events if e["event"] == "file_fetched"}
    for entry in data["trace"]["files"]:
        local = receipt.parent / "trace" / entry["path"]
        assert str(local) in fetched and local.stat().st_size == entry["bytes"] > 0
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(receipt), "--expect", "cpu"),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and "all present beside the receipt" in checked.stdout
    assert sandbox_is_empty(home)
