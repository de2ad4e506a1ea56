"""A receipt is judged by what it says, not only by its hash (issue 22, items 11 and 12).

Anyone can recompute a hash, so every receipt here is resealed after it is changed: what is
left to refuse it is its own verdict and whether it adds up.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.receipt_fixtures import reseal, verifier_receipt
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
    check_receipt,
    json_limit_problem,
    load_receipt,
    parse_marker_line,
)
from tpuwizard.core.evidence.slice_receipt import check_slice_receipt
from tpuwizard.core.evidence.verifier import check_device_count
from tpuwizard.core.launch.workers.multihost import SLICE_RECEIPT, write_slice_receipt
from tpuwizard.core.plan.catalog import parse_accelerator

# The precision profile the verifier wrote on CPU (tpuwizard verify --precision), rounded.
PRECISION = {
    variant: {
        "dtype": dtype,
        "result_dtype": out,
        "max_abs_error": abs_err,
        "max_rel_error": rel,
        "matmul": {"max_abs_error": abs_err, "max_rel_error": rel / 2, "output_dtype": out},
        "mlp": {"max_abs_error": abs_err / 10, "max_rel_error": rel, "output_dtype": out},
    }
    for variant, dtype, out, abs_err, rel in (
        ("fp32", "float32", "float32", 4.37e-05, 5.93e-07),
        ("bf16", "bfloat16", "bfloat16", 0.23, 0.00627),
        ("int8", "int8", "float32", 1.12, 0.022),
    )
}


def with_checks(receipt: dict, *names: str) -> dict:
    extra = [{"name": n, "boundary": "numeric", "ok": True, "detail": ""} for n in names]
    return reseal(dict(receipt, checks=receipt["checks"] + extra))


def test_receipts_the_verifier_writes_pass():
    assert check_receipt(verifier_receipt(), "cpu").ok
    four = verifier_receipt("cpu", 4)
    assert check_receipt(four, "cpu").ok
    deeper = with_checks(dict(four, precision=PRECISION, perf={"bf16_tflops": 0.2}), "perf")
    deeper = with_checks(deeper, "precision")
    result = check_receipt(deeper, "cpu")
    assert result.ok, result.problems
    tpu = verifier_receipt("tpu", 4, processes=4, process_index=3, kind="TPU v5 lite")
    result = check_receipt(tpu, "tpu", "v5litepod-16")
    assert result.ok, result.problems


def set_check(receipt: dict, check: str, **fields: object) -> dict:
    return dict(
        receipt,
        checks=[dict(c, **fields) if c["name"] == check else c for c in receipt["checks"]],
    )


FOUR = verifier_receipt("cpu", 4)


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        (dict(FOUR, ok=False), "own verdict is not a pass (ok is false)"),
        ({k: v for k, v in FOUR.items() if k != "ok"}, "ok is null"),
        (dict(FOUR, ok=True, failed_boundary="numeric"), "failure at the numeric boundary"),
        (dict(FOUR, checks=[]), "missing: import, backend, placement, numeric"),
        (dict(FOUR, checks=FOUR["checks"][:-1]), "missing: contract"),
        (dict(FOUR, checks="all of them"), "not a list of check entries"),
        (set_check(FOUR, "numeric", ok=False), "did not pass: numeric"),
        (set_check(FOUR, "numeric", name="vibes"), "does not write on such a run: 'vibes'"),
        (dict(FOUR, perf={"bf16_tflops": 1.0}), "missing: perf"),
        (dict(FOUR, max_absolute_error=5.0), "max |error| 5.0 is not within"),
        (dict(FOUR, max_absolute_error=float("nan")), "max |error| nan is not within"),
        (dict(FOUR, max_absolute_error=None), "max |error| null"),
        (dict(FOUR, prediction=[0.0] * 8), "not the course's 0.34375 ... 3.625"),
        (dict(FOUR, shape=[9]), "shape is [9]"),
        (dict(FOUR, dtype="float16"), 'dtype is "float16"'),
        (dict(FOUR, device_count=8), "1 process(es) of 4 local devices make 4"),
        (dict(FOUR, device_count=True), "device_count true is not a whole number"),
        (dict(FOUR, device_kinds=["cpu"]), "lists 1 device kinds for 4 devices"),
        (dict(FOUR, min_devices=8), "fewer than the 8 it required"),
        (dict(FOUR, process_index=2), "process 2, but there are 1"),
        (dict(FOUR, expected_sum_of_squares=140.0), "expected pmap sum of squares is 140.0"),
        (dict(FOUR, pmap_sum_of_squares=10417.0), "pmap sum of squares is 10417.0"),
        (dict(FOUR, contract_ok=False), "contract did not hold"),
        (dict(FOUR, expected="tpu"), "expected tpu and cpu"),
        (dict(FOUR, tool="my_verify"), "written by 'my_verify'"),
        (dict(FOUR, precision={"bf16": "oops"}), "precision fp32 is missing or malformed"),
    ],
)
def test_a_resealed_receipt_that_contradicts_itself_is_not_valid(changed, said):
    assert check_receipt(FOUR, "cpu").ok
    result = check_receipt(reseal(changed), "cpu")
    assert not result.ok
    assert any("hash" in f for f in result.facts)  # the hash matches: the contents refuse it
    assert any(said in p for p in result.problems), result.problems


@pytest.mark.parametrize(
    ("variant", "part", "error", "said"),
    [
        ("bf16", None, 0.05, "precision bf16: relative error 0.05 is not within"),
        ("int8", "mlp", 0.3, "precision int8 (mlp): relative error 0.3"),
        ("fp32", None, float("nan"), "precision fp32: relative error nan"),
        ("bf16", None, 1e-7, "bf16 is no less exact than fp32"),
    ],
)
def test_every_precision_error_is_within_the_verifiers_own_bound(variant, part, error, said):
    base = with_checks(dict(FOUR, precision=PRECISION), "precision")
    assert check_receipt(base, "cpu").ok
    precision = json.loads(json.dumps(PRECISION))
    (precision[variant][part] if part else precision[variant])["max_rel_error"] = error
    result = check_receipt(reseal(dict(base, precision=precision)), "cpu")
    assert not result.ok and any(said in p for p in result.problems), result.problems


def test_a_slice_worker_receipt_must_add_up_as_a_slice():
    worker = verifier_receipt("cpu", 4, processes=4, process_index=1)
    assert check_receipt(worker, "cpu").ok
    for change, said in (
        ({"global_psum": 1.0}, "slice psum is 1.0, not 690880.0 over 16 devices"),
        ({"expected_processes": 2}, "it ran 4 processes, but expected 2"),
        (
            {"checks": [c for c in worker["checks"] if c["name"] not in ("join", "slice")]},
            "missing: join, slice",
        ),
    ):
        result = check_receipt(reseal(dict(worker, **change)), "cpu")
        assert not result.ok and any(said in p for p in result.problems), result.problems


def test_a_single_host_receipt_does_not_prove_a_multi_host_slice():
    one = verifier_receipt("tpu", 16, kind="TPU v5 lite")
    result = check_receipt(one, "tpu", "v5litepod-16")
    assert not result.ok
    assert any("1 process(es), but v5litepod-16 has 4 VMs" in p for p in result.problems)


def practice_slice(folder) -> dict:
    paths = {}
    for w in range(4):
        path = folder / f"receipt-w{w}.json"
        path.write_text(json.dumps(verifier_receipt("cpu", 4, processes=4, process_index=w)))
        paths[w] = path
    return write_slice_receipt(folder, parse_accelerator("v5litepod-16"), paths)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"ok": False}, "slice receipt's own verdict is not a pass (ok is false)"),
        ({"expected_devices": 7}, "expected 7 devices, but v5litepod-16 has 16 (16 chips x 1"),
        ({"expected_devices": "many"}, 'expected "many" devices'),
        ({"expected_processes": 40}, "expected 40 processes, but v5litepod-16 has 4 VMs"),
    ],
)
def test_a_resealed_slice_receipt_is_judged_by_its_own_fields(tmp_path, change, said):
    receipt = practice_slice(tmp_path)
    assert check_slice_receipt(receipt, tmp_path).ok
    result = check_slice_receipt(reseal(dict(receipt, **change)), tmp_path)
    assert not result.ok and any(said in p for p in result.problems), result.problems


def test_a_slice_receipt_proves_only_its_own_accelerator(tmp_path):
    receipt = practice_slice(tmp_path)  # v5litepod-16: 4 VMs, 16 devices, like v4-32
    assert check_slice_receipt(receipt, tmp_path, "v5litepod-16").ok
    result = check_slice_receipt(receipt, tmp_path, "v4-32")
    assert not result.ok
    assert 'it is the slice receipt of "v5litepod-16", not v4-32' in result.problems


def test_workers_that_all_say_process_0_are_refused_even_without_their_files(tmp_path):
    receipt = practice_slice(tmp_path)
    receipt["workers"] = [dict(w, process_index=0) for w in receipt["workers"]]
    receipt = reseal(receipt)
    said = "process_index values are [0, 0, 0, 0], not 0 to 3 once each"
    for folder in (None, tmp_path):
        result = check_slice_receipt(receipt, folder)
        assert not result.ok and any(said in p for p in result.problems), result.problems
    beside = check_slice_receipt(receipt, tmp_path).problems
    assert any(
        "receipt-w1.json is process 1, listed as worker 1 with process_index 0" in p for p in beside
    )


def test_receipt_check_names_each_reason_and_exits_1(tmp_path):
    receipt = practice_slice(tmp_path)
    (tmp_path / SLICE_RECEIPT).write_text(json.dumps(reseal(dict(receipt, ok=False))))
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(tmp_path / SLICE_RECEIPT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "FAIL the slice receipt's own verdict is not a pass" in proc.stdout
    assert "REJECTED" in proc.stdout and "Traceback" not in proc.stderr


def test_json_limits_count_only_structure_and_integers():
    nested = lambda n: "[" * n + "]" * n  # noqa: E731
    assert json_limit_problem(nested(MAX_JSON_DEPTH)) is None
    assert "deeper than 64" in str(json_limit_problem(nested(MAX_JSON_DEPTH + 1)))
    digits = "9" * MAX_INTEGER_DIGITS
    assert json_limit_problem(f"[{digits}, -{digits}]") is None
    assert "21-digit integer" in str(json_limit_problem(f"[-{digits}9]"))
    # Inside strings nothing counts, escaped quotes included; floats parse without int().
    assert json_limit_problem(json.dumps({"a": '\\"' + "[" * 100 + "1" * 50})) is None
    assert json_limit_problem("[1." + "1" * 5000 + ", 1" + "0" * 30 + "e5]") is None
    # An unterminated string hides the rest from the count; the parser then refuses it.
    assert json_limit_problem('["' + "[" * 100) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "nests deeper than 64 levels"),
        ('{"receipt_sha256": "x", "n": ' + "1" * 5000 + "}", "5000-digit integer"),
    ],
    ids=["100000-deep", "5000-digit"],  # the text itself would be the test's name
)
def test_a_too_deep_or_too_large_file_is_bad_input_before_parsing(tmp_path, text, said):
    path = tmp_path / "receipt.json"
    path.write_text(text)
    with pytest.raises(BadInput, match=said):
        load_receipt(path)
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(path)), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and "Traceback" not in proc.stderr
    assert parse_marker_line("TPUWIZARD " + text) is None  # a worker's line cannot crash a launch


def test_devices_are_bounded_by_the_largest_slice():
    check_device_count(1)
    check_device_count(2048)  # v3-2048: 1024 chips of 2 devices
    for devices in (0, 2049, 99999999999999999999):
        with pytest.raises(BadInput, match="--devices must be 1 to 2048"):
            check_device_count(devices)


def test_one_device_is_said_in_the_singular():
    one = verifier_receipt("cpu", 1)
    result = check_receipt(one, "cpu", "v5litepod-4")
    assert any(p.startswith("1 device, but v5litepod-4 has 4") for p in result.problems)
