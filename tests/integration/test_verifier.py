"""The real verifier in real JAX subprocesses, against the course's numbers."""

import json
import os
import subprocess
import sys

import pytest
from tpuwizard_verify.tpu_verify import device_holders, receipt_hash

from tests.conftest import clean_env, tpuwizard_cmd
from tests.receipt_fixtures import assert_shaped_like, verifier_receipt
from tests.waiting import wait_until
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt, parse_marker_line
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
    log = tmp_path / "worker-0.log"  # the output as `kubectl logs` saves an exported job's
    log.write_text(proc.stdout)
    assert load_receipt(log) == receipt
    assert "PASS: all" in proc.stdout
    assert check_receipt(receipt, "cpu").ok
    # The unit tests' stand-in has this run's fields and checks, so what they judge is real.
    assert_shaped_like(receipt, verifier_receipt("cpu", devices))


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
    # The computer's name is said as a host's, not as if it were a VM ("on vm" on a laptop).
    import socket

    assert f"on host {socket.gethostname()} (Python" in proc.stdout


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
        [sys.executable, "-c", f"f = open({str(device)!r}); import time; time.sleep(300)"]
    )
    try:
        found = wait_until(
            lambda: device_holders(prefixes=(str(tmp_path),)), 30, "the holder to be seen"
        )
        assert [h["pid"] for h in found] == [holder.pid]
        assert found[0]["devices"] == [str(device)]
        assert "time.sleep" in found[0]["command"]
    finally:
        holder.kill()
        holder.wait()


def test_tpuwizard_verify_saves_a_receipt_under_runs(tmp_path):
    proc = subprocess.run(
        tpuwizard_cmd("verify", "--devices", "4", "--perf", "--precision", "--trace"),
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
    assert receipt["precision"]["bf16"]["max_rel_error"] > 0
    assert f"Trace: {receipts[0].parent / 'trace'}" in proc.stderr
    assert all(
        (receipts[0].parent / "trace" / f["path"]).is_file() for f in receipt["trace"]["files"]
    )
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
    assert tampered.returncode == 1 and "edited" in tampered.stdout


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


@pytest.mark.rotating("deep-checks-e2e")
def test_precision_perf_and_trace_on_cpu(tmp_path):
    path = tmp_path / "run" / "receipt.json"
    proc = run_verifier(
        "--expect", "cpu", "--perf", "--precision", "--trace", "--receipt", str(path)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    receipt = json.loads(path.read_text())
    assert receipt["receipt_sha256"] == receipt_hash(receipt)
    assert receipt["jax_platforms"] == "cpu"
    # Precision: the inputs are not exact in bf16, so bf16 and int8 differ from fp32 and from
    # each other, within what 8 significant bits and 1/127 steps allow.
    precision = receipt["precision"]
    assert precision["fp32"]["dtype"] == "float32" and precision["fp32"]["max_rel_error"] < 1e-5
    assert precision["bf16"]["dtype"] == "bfloat16"
    assert precision["bf16"]["result_dtype"] == "bfloat16"
    assert 1e-4 < precision["bf16"]["max_rel_error"] < 2e-2
    assert precision["int8"]["dtype"] == "int8" and precision["int8"]["result_dtype"] == "float32"
    assert precision["bf16"]["max_rel_error"] < precision["int8"]["max_rel_error"] < 5e-2
    for variant in ("fp32", "bf16", "int8"):
        entry = precision[variant]
        assert entry["max_abs_error"] == max(
            entry["matmul"]["max_abs_error"], entry["mlp"]["max_abs_error"]
        )
        assert entry["max_abs_error"] > 0
    assert "bf16  max |error|" in proc.stdout and "int8  max |error|" in proc.stdout
    # Perf: random data, best of the trials, no peak figure for a CPU.
    perf = receipt["perf"]
    assert perf["data"] == "random normal"
    assert perf["bf16_tflops"] == max(perf["bf16_tflops_trials"]) > 0
    assert len(perf["fp32_tflops_trials"]) == perf["trials"]
    assert perf["peak_fraction"] is None and perf["device_kind"] == "cpu"
    # Trace: the files the receipt lists exist beside it, non-empty, with the recorded sizes.
    trace = receipt["trace"]
    assert trace["dir"] == "trace" and trace["files"]
    for entry in trace["files"]:
        on_disk = path.parent / "trace" / entry["path"]
        assert on_disk.stat().st_size == entry["bytes"] > 0
    assert any(f["path"].endswith(".xplane.pb") for f in trace["files"])
    assert "ui.perfetto.dev" in proc.stdout and "tensorboard --logdir" in proc.stdout
    checked = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(path), "--expect", "cpu"),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
    assert "precision int8" in checked.stdout  # the verdict is the command's result: stdout
    assert "all present beside the receipt" in checked.stdout

    # A second run into the same folder lists only its own trace session.
    again = run_verifier("--expect", "cpu", "--trace", "--receipt", str(path))
    assert again.returncode == 0, again.stdout + again.stderr
    second = json.loads(path.read_text())["trace"]["files"]
    assert not {f["path"] for f in second} & {f["path"] for f in trace["files"]}


def test_expecting_gpu_without_one_names_the_missing_runtime(tmp_path):
    path = tmp_path / "receipt.json"
    proc = run_verifier("--expect", "gpu", "--receipt", str(path))
    assert proc.returncode == 1
    receipt = json.loads(path.read_text())
    assert receipt["expected_backend"] == "gpu"  # as the course writes it
    assert receipt["failed_boundary"] == "backend"
    assert "jax[cuda12]" in proc.stdout
