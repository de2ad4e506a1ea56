import json

import pytest
from tpuwizard_verify.tpu_verify import receipt_hash

from tests.receipt_fixtures import verifier_receipt
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import (
    check_receipt,
    load_receipt,
    parse_marker_line,
    usable_hbm_gib_per_chip,
)

# The course's recorded runtime receipt (phase 19) and the hash it printed.
COURSE_RECEIPT = {
    "contract_ok": True,
    "device_count": 1,
    "device_kinds": ["cpu"],
    "expected_backend": "cpu",
    "expected_sum_of_squares": 140.0,
    "jax": "0.9.2",
    "local_device_count": 1,
    "observed_backend": "cpu",
    "pmap_sum_of_squares": 140.0,
    "python": "3.14.3",
}


def sealed(**fields):
    receipt = dict(COURSE_RECEIPT, **fields)
    receipt["receipt_sha256"] = receipt_hash(receipt)
    return receipt


def test_hash_reproduces_the_course_recorded_receipt():
    assert receipt_hash(COURSE_RECEIPT) == "4ddc0cbb323fe3bd"
    # The hash field itself is never part of what is hashed.
    assert receipt_hash(dict(COURSE_RECEIPT, receipt_sha256="x")) == "4ddc0cbb323fe3bd"


def test_a_course_receipt_passes_the_check():
    result = check_receipt(sealed(), expect="cpu")
    assert result.ok, result.problems


def test_a_tampered_receipt_is_rejected():
    receipt = sealed()
    receipt["device_count"] = 8
    result = check_receipt(receipt)
    assert not result.ok
    assert any("edited" in p for p in result.problems)


def test_a_cpu_receipt_does_not_prove_a_tpu_run():
    result = check_receipt(sealed(), expect="tpu")
    assert not result.ok
    assert any("not the expected tpu" in p for p in result.problems)


def test_device_count_and_kind_must_match_the_accelerator():
    tpu = verifier_receipt("tpu", 4, kind="TPU v5 lite")
    assert check_receipt(tpu, "tpu", "v5litepod-4").ok
    wrong_count = check_receipt(tpu, "tpu", "v5litepod-8")
    assert not wrong_count.ok and any("v5litepod-8 has 8" in p for p in wrong_count.problems)
    wrong_kind = check_receipt(tpu, "tpu", "v6e-4")
    assert not wrong_kind.ok and any("TPU v6 lite" in p for p in wrong_kind.problems)


def test_failed_contract_or_boundary_is_rejected():
    assert not check_receipt(sealed(contract_ok=False)).ok
    assert not check_receipt(sealed(ok=False, failed_boundary="backend")).ok


def test_bad_arguments_are_bad_input():
    with pytest.raises(BadInput):
        check_receipt(sealed(), expect="quantum")
    with pytest.raises(BadInput, match="v5litepod-4"):
        check_receipt(sealed(), accelerator="v5e-4")


def test_load_receipt_explains_unreadable_files(tmp_path):
    with pytest.raises(BadInput, match="No receipt"):
        load_receipt(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BadInput, match="holds no receipt"):
        load_receipt(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"a": 1}))
    with pytest.raises(BadInput, match="receipt_sha256"):
        load_receipt(tmp_path / "other.json")


def test_marker_lines_are_parsed_even_with_a_worker_prefix():
    assert parse_marker_line('TPUWIZARD {"kind": "check", "ok": true}') == {
        "kind": "check",
        "ok": True,
    }
    assert parse_marker_line('[w1] TPUWIZARD {"kind": "receipt"}') == {"kind": "receipt"}
    assert parse_marker_line("  PASS numeric ...") is None
    assert parse_marker_line("TPUWIZARD {broken") is None


def test_receipts_with_the_new_fields_hash_check_and_show_them(tmp_path):
    trace_file = tmp_path / "trace" / "plugins" / "profile" / "s" / "h.xplane.pb"
    trace_file.parent.mkdir(parents=True)
    trace_file.write_bytes(b"abc")
    receipt = sealed(
        expected_backend="gpu",  # the measurements are an H200's: its fields agree (item 9)
        observed_backend="gpu",
        device_kinds=["NVIDIA H200"],
        perf={
            "bf16_tflops": 805.2,
            "fp32_tflops": 51.0,
            "matmul_size": 8192,
            "data": "random normal",
            "trials": 5,
            "device_kind": "NVIDIA H200",
            "peak_bf16_tflops": 989.0,
            "peak_fraction": 0.8142,
        },
        precision={
            v: {"dtype": v, "result_dtype": "float32", "max_abs_error": e, "max_rel_error": e}
            for v, e in (("fp32", 1e-7), ("bf16", 4e-3), ("int8", 2e-2))
        },
        memory=[{"device": "cuda:0", "bytes_limit": 112_600_000_000, "bytes_in_use": 0}],
        memory_limit_is="jax_gpu_pool",
        trace={"dir": "trace", "files": [{"path": "plugins/profile/s/h.xplane.pb", "bytes": 3}]},
    )
    result = check_receipt(receipt, "gpu", folder=tmp_path)
    assert result.ok, result.problems
    shown = "\n".join(result.measurements)
    assert "81.4% of NVIDIA H200's 989.0 TFLOP/s bf16 peak" in shown
    assert "precision bf16: max |error| 0.004, relative 0.004" in shown
    assert "not the GPU's total memory" in shown
    assert "1 file(s), 3 bytes in trace/, all present beside the receipt" in shown
    trace_file.write_bytes(b"abcd")
    changed = check_receipt(receipt, "gpu", folder=tmp_path)
    assert changed.ok and "1 missing or changed" in "\n".join(changed.measurements)
    receipt["precision"]["bf16"]["max_rel_error"] = 0.0
    assert not check_receipt(receipt, "cpu").ok  # edited after sealing


def test_malformed_measurements_are_named_not_raised():
    shown = check_receipt(sealed(perf=[1], trace="x"), "cpu")
    assert shown.ok, shown.problems  # perf and trace are measurements: shown, not judged
    judged = check_receipt(sealed(precision={"bf16": "oops"}), "cpu")
    assert not judged.ok  # the precision profile has bounds, so a broken one fails
    assert "precision bf16 is missing or malformed" in judged.problems
    assert "precision bf16: missing or malformed" in judged.measurements


def tpu_receipt(**fields):
    tpu = {
        "expected_backend": "tpu",
        "observed_backend": "tpu",
        "device_count": 4,
        "local_device_count": 4,
        "device_kinds": ["TPU v5 lite"] * 4,
        "memory": [{"device": f"TPU_{i}", "bytes_limit": 15 * 2**30 + i} for i in range(4)],
        "memory_limit_is": "usable_hbm",
    }
    return sealed(**{**tpu, **fields})


def test_usable_hbm_comes_from_a_tpu_receipt_only():
    key, gib = usable_hbm_gib_per_chip(tpu_receipt())
    assert key == "v5e" and gib == pytest.approx(15.0)  # the smallest device's limit
    gpu = sealed(memory=[{"bytes_limit": 10**11}], memory_limit_is="jax_gpu_pool")
    with pytest.raises(BadInput, match="JAX's memory pool"):
        usable_hbm_gib_per_chip(gpu)
    edited = tpu_receipt()
    edited["memory"][0]["bytes_limit"] = 2**40
    with pytest.raises(BadInput, match="edited"):
        usable_hbm_gib_per_chip(edited)
    with pytest.raises(BadInput, match="no single known TPU kind"):
        usable_hbm_gib_per_chip(tpu_receipt(device_kinds=["TPU v9"]))


def test_fit_uses_the_measured_limit_for_that_generation_only(tmp_path):
    import subprocess

    from tests.conftest import tpuwizard_cmd

    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(tpu_receipt()))
    # 14.5 GiB fits under the measured 15.0 GiB but not under a 10% reserve (14.4 GiB).
    args = ["fit", "14.5", "--slices", "v5litepod-1,v6e-1", "--usable", "0.9", "--json"]
    without = json.loads(subprocess.run(tpuwizard_cmd(*args), capture_output=True).stdout)
    proc = subprocess.run(
        tpuwizard_cmd(*args, "--receipt", str(path)), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    with_receipt = {s["name"]: s for s in json.loads(proc.stdout)["slices"]}
    before = {s["name"]: s for s in without["slices"]}
    assert not before["v5litepod-1"]["fits_sharded"]
    assert with_receipt["v5litepod-1"]["fits_sharded"]
    assert with_receipt["v5litepod-1"]["usable_gib_per_chip"] == 15.0
    assert with_receipt["v6e-1"] == before["v6e-1"]  # another generation keeps the reserve
    assert "measured" in proc.stderr
    bad = subprocess.run(
        tpuwizard_cmd("fit", "14.5", "--receipt", str(tmp_path / "none.json")),
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "No receipt" in bad.stderr


def course_printout(receipt: dict) -> str:
    """What the course's lesson prints, saved as it does (`... | tee tpu-report.txt`)."""
    line = "Verified runtime receipt: " + json.dumps(receipt, sort_keys=True)
    totals = "{'v5litepod-1': 16, 'v5litepod-4': 64, 'v5litepod-8': 128, 'v6e-4': 128}"
    return f"{line}\nSingle-host TPU slice HBM totals (GiB): {totals}\n"


def test_receipt_check_reads_the_courses_printed_line_and_says_the_verdict_on_stdout(tmp_path):
    import subprocess

    from tests.conftest import tpuwizard_cmd

    report = tmp_path / "tpu-report.txt"
    report.write_text(course_printout(sealed()))
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(report), "--expect", "cpu"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hash 4ddc0cbb323fe3bd matches" in proc.stdout
    assert f"{report}: valid" in proc.stdout  # the verdict is the result: stdout
    assert "detects edits, not forgery" in proc.stderr  # the note stays a note
    report.write_text(course_printout(dict(sealed(), device_count=4)))  # edited after printing
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(report)), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and f"{report}: REJECTED" in proc.stdout
    assert "edited after it was written" in proc.stdout


def test_the_last_printed_receipt_of_a_printout_is_the_one_checked(tmp_path):
    report = tmp_path / "tpu-report.txt"
    first, last = sealed(), sealed(device_count=4, local_device_count=4)
    report.write_text("noise\n" + course_printout(first) + course_printout(last))
    assert load_receipt(report) == last
    report.write_text("no receipt in here\n")
    with pytest.raises(BadInput, match="Verified runtime receipt"):
        load_receipt(report)


def test_a_receipt_where_no_backend_started_says_so_in_words():
    result = check_receipt(sealed(observed_backend=None, expected_backend="tpu"), expect="tpu")
    assert not result.ok
    text = " ".join(result.problems)
    assert "None" not in text
    assert "it asked for tpu but no backend started, so nothing ran" in text
    assert "no backend started, not the expected tpu" in text
