"""Receipts that mean what they say (issue 17, items 13-15): slice receipts are checked worker by
worker against --expect and the accelerator; odd JSON is refused; the hash's meaning is said."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from tpuwizard_verify.tpu_verify import receipt_hash

from tests.conftest import tpuwizard_cmd
from tests.receipt_fixtures import verifier_receipt
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import load_receipt
from tpuwizard.core.evidence.slice_receipt import check_slice_receipt
from tpuwizard.core.launch.workers.multihost import SLICE_RECEIPT, write_slice_receipt
from tpuwizard.core.plan.catalog import parse_accelerator

ACCEL = "v5litepod-16"  # 4 VMs of 4 chips


def worker_receipt(w: int, backend: str = "cpu", kind: str = "cpu") -> dict:
    return verifier_receipt(backend, 4, processes=4, process_index=w, kind=kind, libtpu="none")


def practice_slice(folder, **worker_fields) -> dict:
    paths = {}
    for w in range(4):
        path = folder / f"receipt-w{w}.json"
        path.write_text(json.dumps(worker_receipt(w, **worker_fields)))
        paths[w] = path
    return write_slice_receipt(folder, parse_accelerator(ACCEL), paths)


def reseal(folder, receipt: dict) -> dict:
    receipt["receipt_sha256"] = receipt_hash(receipt)
    (folder / SLICE_RECEIPT).write_text(json.dumps(receipt))
    return receipt


def test_a_practice_slice_passes_as_cpu_and_never_as_tpu(tmp_path):
    receipt = practice_slice(tmp_path)
    assert check_slice_receipt(receipt, tmp_path, expect="cpu").ok
    as_tpu = check_slice_receipt(receipt, tmp_path, expect="tpu")
    assert not as_tpu.ok
    assert sum("not the expected tpu" in p for p in as_tpu.problems) == 4


def test_a_tpu_slice_must_show_the_accelerators_device_kind(tmp_path):
    receipt = practice_slice(tmp_path, backend="tpu", kind="TPU v4")
    result = check_slice_receipt(receipt, tmp_path, expect="tpu")
    assert not result.ok and any("TPU v5 lite" in p for p in result.problems)
    good = tmp_path / "good"
    good.mkdir()
    receipt = practice_slice(good, backend="tpu", kind="TPU v5 lite")
    assert check_slice_receipt(receipt, good, expect="tpu").ok


def test_one_worker_file_listed_four_times_is_refused(tmp_path):
    receipt = practice_slice(tmp_path)
    w0 = receipt["workers"][0]
    receipt["workers"] = [dict(w0, worker=w) for w in range(4)]
    result = check_slice_receipt(reseal(tmp_path, receipt), tmp_path, expect="cpu")
    assert not result.ok and any("more than once" in p for p in result.problems)


@pytest.mark.parametrize("name", ["../receipt-w0.json", "/etc/passwd", "sub/receipt-w0.json", ".."])
def test_worker_files_must_lie_inside_the_receipts_folder(tmp_path, name):
    inner = tmp_path / "run"
    inner.mkdir()
    receipt = practice_slice(inner)
    (inner / "sub").mkdir()
    (inner / "sub" / "receipt-w0.json").write_text((inner / "receipt-w0.json").read_text())
    receipt["workers"][0]["file"] = name
    result = check_slice_receipt(reseal(inner, receipt), inner)
    assert not result.ok and any("not a file name inside" in p for p in result.problems)


@pytest.mark.parametrize(
    "change",
    [
        {"workers": "all of them"},
        {"workers": [1, 2, 3, 4]},
        {"accelerator": "v99-8"},
        {"workers": [{"worker": 0, "file": 7, "ok": True}]},
    ],
)
def test_a_malformed_slice_receipt_is_rejected_cleanly(tmp_path, change):
    receipt = practice_slice(tmp_path)
    receipt.update(change)
    reseal(tmp_path, receipt)
    proc = subprocess.run(
        tpuwizard_cmd("receipt", "check", str(tmp_path / SLICE_RECEIPT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "REJECTED" in proc.stdout and "Traceback" not in proc.stderr


def test_receipt_check_honours_expect_for_a_slice_and_says_what_the_hash_means(tmp_path):
    practice_slice(tmp_path)
    path = str(tmp_path / SLICE_RECEIPT)
    run = lambda *a: subprocess.run(  # noqa: E731
        tpuwizard_cmd("receipt", "check", path, *a), capture_output=True, text=True, timeout=60
    )
    assert run("--expect", "cpu").returncode == 0
    refused = run("--expect", "tpu")
    assert refused.returncode == 1 and "not the expected tpu" in refused.stdout
    assert "detects edits, not forgery" in refused.stderr


def test_a_duplicated_key_is_refused_and_a_byte_order_mark_accepted(tmp_path):
    good = worker_receipt(0)
    text = json.dumps(good)
    twice = tmp_path / "twice.json"
    # The file shows ok: false first; Python would keep the last, true.
    twice.write_text('{"ok": false, ' + text[1:])
    with pytest.raises(BadInput, match="key 'ok' twice"):
        load_receipt(twice)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load_receipt(bom) == good


def test_a_fifo_or_a_folder_is_bad_input_not_a_hang(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        proc = subprocess.run(
            tpuwizard_cmd("receipt", "check", str(path)), capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 2, proc.stderr
        assert "receipt.json" in proc.stderr and "Traceback" not in proc.stderr
