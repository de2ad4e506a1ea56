"""Receipts shaped as tpu_verify writes them, without running JAX.

``tests/integration/test_verifier.py`` compares this shape with a real run's receipt, key for
key and check for check, so these stand-ins cannot drift from what the verifier writes.
"""

from __future__ import annotations

from typing import Any

from tpuwizard_verify.tpu_verify import (
    CHECKS,
    COURSE_PREDICTION,
    SLICE_CHECKS,
    expected_sum_of_squares,
    receipt_hash,
)

# The boundary each check names, where it is not the check's own name.
BOUNDARY_OF = {
    "changed_bias": "numeric",
    "row_reversal": "numeric",
    "join": "contract",
    "slice": "contract",
    "perf": "contract",
    "precision": "numeric",
    "trace": "contract",
}


def verifier_receipt(
    backend: str = "cpu",
    local_devices: int = 1,
    processes: int = 1,
    process_index: int = 0,
    kind: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A sealed passing receipt of ``processes`` x ``local_devices`` devices; ``fields`` are
    changed before sealing."""
    devices = local_devices * processes
    kind = kind or backend
    names = list(CHECKS)
    if processes > 1:  # the verifier joins the slice right after import, and checks it last
        join, whole_slice = SLICE_CHECKS
        names = [names[0], join, *names[1:], whole_slice]
    receipt: dict[str, Any] = {
        "tool": "tpu_verify",
        "expected": backend,
        "expected_backend": backend,
        "observed_backend": backend,
        "python": "3.11.7",
        "jax": "0.10.2",
        "jaxlib": "0.10.2",
        "libtpu": None,
        "hostname": "vm",
        "started_at": "2026-12-01T08:00:00+00:00",
        "min_devices": devices if backend == "cpu" else 1,
        "device_count": devices,
        "local_device_count": local_devices,
        "device_kinds": [kind] * devices,
        "output_devices": [f"{backend.upper()}_0"],
        "platform": backend,
        "shape": [8],
        "dtype": "float32",
        "prediction": list(COURSE_PREDICTION),
        "max_absolute_error": 0.0,
        "process_index": process_index,
        "process_count": processes,
        "pmap_sum_of_squares": expected_sum_of_squares(local_devices),
        "expected_sum_of_squares": expected_sum_of_squares(local_devices),
        "contract_ok": True,
        "jax_platforms": backend,
        "memory": [
            {"device": f"{backend}:{i}", "bytes_limit": None, "bytes_in_use": None}
            for i in range(local_devices)
        ],
        "memory_limit_is": None,
        "perf": None,
        "precision": None,
        "trace": None,
        "checks": [
            {"name": n, "boundary": BOUNDARY_OF.get(n, n), "ok": True, "detail": "held"}
            for n in names
        ],
        "ok": True,
        "failed_boundary": None,
        "elapsed_s": 1.0,
    }
    if processes > 1:
        receipt.update(
            global_psum=expected_sum_of_squares(devices),
            expected_global_psum=expected_sum_of_squares(devices),
            expected_processes=processes,
        )
    receipt.update(fields)
    receipt["receipt_sha256"] = receipt_hash(receipt)
    return receipt


def reseal(receipt: dict[str, Any]) -> dict[str, Any]:
    """The same receipt with its hash recomputed, as anyone can: only its contents then judge it."""
    receipt = dict(receipt)
    receipt["receipt_sha256"] = receipt_hash(receipt)
    return receipt


def assert_shaped_like(receipt: dict[str, Any], stand_in: dict[str, Any]) -> None:
    """A real run's receipt has the stand-in's fields, and its checks in the same order."""
    assert set(receipt) == set(stand_in)
    assert [(c["name"], c["boundary"]) for c in receipt["checks"]] == [
        (c["name"], c["boundary"]) for c in stand_in["checks"]
    ]
