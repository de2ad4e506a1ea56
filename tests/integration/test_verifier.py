"""The real verifier in real JAX subprocesses, against the course's numbers."""

import json
import os
import subprocess
import sys

import pytest
from tpuwizard_verify.tpu_verify import device_holders

from tests.conftest import clean_env, tpuwizard_cmd
from tests.waiting import wait_until
from tpuwizard.core.evidence.receipt import check_receipt, parse_marker_line, receipt_hash
from tpuwizard.core.evidence.verifier import cpu_device_env, verifier_path

COURSE = [0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625]


def run_verifier(*args, devices=1, env_extra=None):
    env = cpu_device_env(devices, clean_env(**(env_extra or {})))
    return subprocess.run(
        [sys.executable, str(verifier_path()), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def payloads(stdout):
    return [p for p in map(parse_marker_line, stdout.splitlines()) if p]


@pytest.mark.parametrize(("devices", "sum_of_squares"), [(1, 140.0), (4, 10416.0)])
def test_cpu_run_matches_the_course(tmp_path, devices, sum_of_squares):
    path = tmp_path / "receipt.json"
    proc = run_verifier(
        "--expect", "cpu", "--min-devices", str(devices), "--receipt", str(path), devices=devices
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    receipt = json.loads(path.read_text())
    assert receipt["prediction"] == COURSE
    assert receipt["pmap_sum_of_squares"] == sum_of_squares
    assert receipt["expected_sum_of_squares"] == sum_of_squares
    assert receipt["device_count"] == devices and receipt["local_device_count"] == devices
    assert receipt["contract_ok"] is True and receipt["ok"] is True
    assert receipt["failed_boundary"] is None
    assert receipt["platform"] == "cpu" and receipt["shape"] == [8]
    assert receipt["dtype"] == "float32" and receipt["max_absolute_error"] < 1e-6
    assert receipt["receipt_sha256"] == receipt_hash(receipt)
    # The machine-readable stream has one line per check and the same receipt at the end.
    lines = payloads(proc.stdout)
    checks = [p for p in lines if p["kind"] == "check"]
    assert {c["name"] for c in checks} >= {
        "import",
        "backend",
        "placement",
        "numeric",
        "changed_bias",
        "row_reversal",
        "contract",
    }
    assert lines[-1] == {"kind": "receipt", "receipt": receipt}
    assert "PASS: all" in proc.stdout
    assert check_receipt(receipt, "cpu").ok


def test_expecting_tpu_on_a_cpu_machine_fails_at_the_backend(tmp_path):
    path = tmp_path / "receipt.json"
    proc = run_verifier("--expect", "tpu", "--receipt", str(path))
    assert proc.returncode == 1
    receipt = json.loads(path.read_text())
    assert receipt["ok"] is False and receipt["contract_ok"] is False
    assert receipt["failed_boundary"] == "backend"
    assert receipt["prediction"] is None  # nothing ran, so no CPU result poses as a TPU one
    assert "the backend boundary failed" in proc.stdout
    assert not check_receipt(receipt, "tpu").ok


def test_the_course_environment_variable_selects_the_platform():
    proc = run_verifier(env_extra={"COURSE_EXPECT_PLATFORM": "tpu"})
    assert proc.returncode == 1
    assert "expecting platform 'tpu'" in proc.stdout


def test_too_few_devices_breaks_the_contract(tmp_path):
    proc = run_verifier("--expect", "cpu", "--min-devices", "4", devices=2)
    assert proc.returncode == 1
    receipt = payloads(proc.stdout)[-1]["receipt"]
    assert receipt["failed_boundary"] == "contract"
    assert "fewer than the 4 required" in proc.stdout


def test_bad_arguments_exit_2():
    proc = run_verifier("--expect", "quantum")
    assert proc.returncode == 2 and "--expect" in proc.stderr


def test_device_holders_names_the_process_holding_a_device(tmp_path):
    device = tmp_path / "accel0"
    device.write_text("")
    holder = subprocess.Popen(
        [sys.executable, "-c", f"f = open({str(device)!r}); import time; time.sleep(30)"]
    )
    try:
        found = wait_until(
            lambda: device_holders(prefixes=(str(tmp_path),)), 10, "the holder to be seen"
        )
        assert [h["pid"] for h in found] == [holder.pid]
        assert found[0]["devices"] == [str(device)]
        assert "time.sleep" in found[0]["command"]
    finally:
        holder.kill()
        holder.wait()


def test_tpuwizard_verify_saves_a_receipt_under_runs(tmp_path):
    proc = subprocess.run(
        tpuwizard_cmd("verify", "--devices", "4", "--perf"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "TPUWIZARD {" not in proc.stdout
    receipts = list((tmp_path / "runs").glob("*/receipt.json"))
    assert len(receipts) == 1
    receipt = json.loads(receipts[0].read_text())
    assert receipt["device_count"] == 4 and receipt["perf"]["fp32_tflops"] > 0
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(receipts[0]), "--expect", "cpu"),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    receipt["device_count"] = 64
    receipts[0].write_text(json.dumps(receipt))
    tampered = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(receipts[0])), capture_output=True, text=True
    )
    assert tampered.returncode == 1 and "edited" in tampered.stderr


def test_tpuwizard_verify_exits_1_when_the_platform_is_missing(tmp_path):
    proc = subprocess.run(
        tpuwizard_cmd("verify", "--expect", "tpu"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
    )
    assert proc.returncode == 1
    assert "backend" in proc.stdout
    assert os.path.exists(next((tmp_path / "runs").glob("*/receipt.json")))
