"""Multi-host slices in the sandbox: one process per VM, joined by jax.distributed on loopback."""

import json
import os
import signal
import subprocess
import threading
import time
from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import launch, ledger_all_gone, sandbox_is_empty
from tests.receipt_fixtures import assert_shaped_like, verifier_receipt
from tpuwizard.core.errors import VersionMismatch
from tpuwizard.core.evidence.slice_receipt import check_slice_receipt
from tpuwizard.core.launch.workers.multihost import check_versions

JOINS = (
    "import jax\n"
    "jax.distributed.initialize()  # no arguments: on a TPU slice JAX finds the rest itself\n"
    "print('processes', jax.process_count(), 'index', jax.process_index(),\n"
    "      'devices', jax.device_count(), flush=True)\n"
)


@pytest.mark.rotating("multihost-e2e")
def test_v5litepod_16_runs_on_every_worker_and_proves_the_whole_slice(tmp_path, home):
    script = tmp_path / "joins.py"
    script.write_text(JOINS)
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-16", "--script", str(script)
    )
    assert code == 0, stderr
    joined = {e["worker"]: e["text"] for e in events if e["event"] == "script_line"}
    assert joined == {w: f"processes 4 index {w} devices 16" for w in range(4)}
    ready = next(e for e in events if e["event"] == "ready")
    assert ready["workers"] == 4
    lines = [e for e in events if e["event"] == "verifier_line"]
    assert {e["worker"] for e in lines} == {0, 1, 2, 3} and all(e["workers"] == 4 for e in lines)
    slice_checks = [e for e in events if e["event"] == "check" and e["name"] == "slice"]
    assert len(slice_checks) == 4 and all(e["ok"] for e in slice_checks)
    assert "690880.0" in slice_checks[0]["detail"]  # the closed form over 16 devices
    saved = next(e for e in events if e["event"] == "receipt_saved")
    slice_receipt = Path(saved["path"])
    assert slice_receipt.name == "slice-receipt.json" and saved["ok"]
    data = json.loads(slice_receipt.read_text())
    assert data["process_count"] == 4 and data["device_count"] == 16 and data["agree"]
    assert [w["file"] for w in data["workers"]] == [f"receipt-w{i}.json" for i in range(4)]
    assert check_slice_receipt(data, slice_receipt.parent, "v5litepod-16").ok
    for w in range(4):  # the unit tests' stand-in for a worker's receipt is shaped like these
        receipt = json.loads((slice_receipt.parent / f"receipt-w{w}.json").read_text())
        # A launch names this computer's JAX too, beside the worker's (the table's default).
        assert receipt["laptop_jax"] == metadata.version("jax")
        assert_shaped_like(
            receipt, verifier_receipt("cpu", 4, processes=4, process_index=w, laptop_jax="0.10.2")
        )
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(slice_receipt)), capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
    # A worker receipt changed afterwards no longer matches the slice receipt.
    w1 = slice_receipt.parent / "receipt-w1.json"
    tampered = json.loads(w1.read_text())
    tampered["device_count"] = 4
    w1.write_text(json.dumps(tampered))
    assert not check_slice_receipt(data, slice_receipt.parent).ok
    assert sandbox_is_empty(home) and ledger_all_gone(home)


@pytest.mark.rotating("multihost-e2e")
def test_every_worker_sends_back_its_own_trace(tmp_path, home):
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-16", "--precision", "--trace"
    )
    assert code == 0, stderr
    run = Path(next(e for e in events if e["event"] == "receipt_saved")["path"]).parent
    for worker in range(4):
        data = json.loads((run / f"receipt-w{worker}.json").read_text())
        assert data["precision"]["bf16"]["max_rel_error"] > 0
        assert data["trace"]["dir"] == f"trace-w{worker}" and data["trace"]["files"]
        for entry in data["trace"]["files"]:
            local = run / f"trace-w{worker}" / entry["path"]
            assert local.stat().st_size == entry["bytes"] > 0
    assert sandbox_is_empty(home)


def kill_worker_verifier(home: Path, worker: int, stop: threading.Event) -> None:
    """Kill the verifier of one worker as soon as it starts (its cwd is that worker's home)."""
    while not stop.is_set():
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cwd = os.readlink(proc / "cwd")
                cmd = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            argv = cmd.split(b"\0")
            is_verifier = b"python" in argv[0] and any(a.endswith(b"tpu_verify.py") for a in argv)
            if cwd.endswith(f"/w{worker}") and str(home) in cwd and is_verifier:
                os.kill(int(proc.name), signal.SIGKILL)
                return
        time.sleep(0.02)


@pytest.mark.rotating("multihost-e2e")
def test_a_worker_killed_in_initialisation_is_named_and_teardown_still_verified(tmp_path, home):
    stop = threading.Event()
    killer = threading.Thread(target=kill_worker_verifier, args=(home, 2, stop), daemon=True)
    killer.start()
    try:
        # Four workers bootstrapping and a 30 s join timeout: on a loaded 2-core machine with
        # other suites beside it this has taken over 240 s (a hang detector, not a timing).
        code, events, _ = launch(tmp_path, "--accelerator", "v5litepod-16", timeout=600)
    finally:
        stop.set()
    failed = next(e for e in events if e["event"] == "failed")
    assert failed["diagnosis"]["kind"] == "slice_incomplete", failed
    assert "w2 never joined" in failed["diagnosis"]["explanation"]
    assert failed["diagnosis"]["title"] == "Not every host started the program"
    assert "--worker=all" in " ".join(failed["diagnosis"]["next_steps"])
    assert any(e["event"] == "teardown_verified" for e in events) and code != 0
    assert sandbox_is_empty(home) and ledger_all_gone(home)


def test_mismatched_versions_are_reported_before_anything_hangs():
    same = {"jax": "0.10.2", "jaxlib": "0.10.2", "libtpu": "0.0.30"}
    check_versions({0: same, 1: dict(same)})
    with pytest.raises(VersionMismatch, match="w1 has"):
        check_versions({0: same, 1: dict(same, libtpu="0.0.29"), 2: same})


STALLS = (
    "import jax\n"
    "print('starting', flush=True)\n"
    "jax.distributed.initialize()\n"
    "print('joined', jax.process_index(), flush=True)\n"
)


@pytest.mark.rotating("multihost-e2e")
def test_a_suspended_worker_is_ended_by_the_stall_guard_not_the_deadline(tmp_path, home):
    """worker_stall=2: worker 2's script is suspended as it starts, so the others wait in
    jax.distributed.initialize (their join timeout: 1800 s) and the deadline is an hour away; the
    stall guard ends the run after a minute, names w2 and shows every worker's lines and stacks."""
    script = tmp_path / "stalls.py"
    script.write_text(STALLS)
    started = time.monotonic()
    code, events, stderr = launch(
        tmp_path,
        "--accelerator",
        "v5litepod-16",
        "--script",
        str(script),
        "--stall-timeout",
        "1",
        "--max-run",
        "60",
        timeout=600,
        TPUWIZARD_SANDBOX_FAULTS="worker_stall=2",
    )
    took = time.monotonic() - started
    failed = next(e for e in events if e["event"] == "failed")
    diagnosis = failed["diagnosis"]
    assert diagnosis["kind"] == "workers_stalled", (failed, stderr)
    assert "w2 printed nothing" in diagnosis["explanation"]
    steps = diagnosis["next_steps"]
    assert steps[0].startswith("stalled: w2 printed nothing and used no CPU time for 1 minutes")
    assert "never reached jax.distributed.initialize: w2" in steps
    assert "w2 printed nothing" in steps
    for worker in (0, 1, 3):  # their last lines, and a stack inside the join
        assert f"w{worker}'s last lines: starting" in steps
        stack = next(s for s in steps if s.startswith(f"w{worker}'s stack: "))
        assert "distributed.py" in stack and stack.endswith("stalls.py:3 in <module>"), stack
    assert "w2's stack: no stack: its script is suspended (stopped), so it cannot answer" in steps
    # Every frame stays with the script's output.
    finished = next(e for e in events if e["event"] == "finished")
    assert "w0's Python stack:" in (Path(finished["run_dir"]) / "output.txt").read_text()
    assert any(e["event"] == "teardown_verified" for e in events) and code != 0
    assert took < 600 and not any("deadline" in e.get("event", "") for e in events)
    assert sandbox_is_empty(home) and ledger_all_gone(home)
