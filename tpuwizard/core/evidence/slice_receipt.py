"""Checking a slice receipt: the multi-host run's summary plus one receipt per worker.

A slice receipt proves no more than its worker receipts do, so each of those is checked as a
receipt in its own right (against ``--expect`` and the accelerator), every worker exactly once,
each read from a plain file name inside the slice receipt's folder. A malformed slice receipt is
rejected with its problems named, never with a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tpuwizard_verify.tpu_verify import receipt_hash

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import ReceiptCheck, check_receipt, load_receipt
from tpuwizard.core.evidence.receipt_rules import show
from tpuwizard.core.plan import catalog


def check_slice_receipt(
    receipt: dict[str, Any],
    folder: Path | None,
    accelerator: str | None = None,
    expect: str | None = None,
) -> ReceiptCheck:
    """Its own hash, the slice's shape, and every worker's receipt (from ``folder``) by hash,
    by ``expect`` and by ``accelerator`` (the slice's own accelerator when not given)."""
    result = ReceiptCheck(ok=True)

    def problem(text: str) -> None:
        result.ok = False
        result.problems.append(text)

    if receipt.get("receipt_sha256") != receipt_hash(receipt):
        problem("the slice receipt was edited after it was written (hash mismatch)")
    if receipt.get("ok") is not True:
        problem(f"the slice receipt's own verdict is not a pass (ok is {show(receipt.get('ok'))})")
    if receipt.get("agree") is not True:
        problem("the workers disagree on process count, device count or versions")
    name = accelerator or receipt.get("accelerator")
    try:
        slice_ = catalog.parse_accelerator(str(name))
    except catalog.UnknownAcceleratorError as err:
        if accelerator:
            raise BadInput(str(err)) from None
        problem(f"it names no known accelerator ({name!r})")
        return result
    if accelerator and _canonical(receipt.get("accelerator")) != slice_.name:
        problem(f"it is the slice receipt of {show(receipt.get('accelerator'))}, not {slice_.name}")
    if receipt.get("expected_processes") != slice_.vms:
        problem(
            f"it expected {show(receipt.get('expected_processes'))} processes, but {slice_.name}"
            f" has {slice_.vms} VMs"
        )
    if receipt.get("expected_devices") != slice_.devices:
        problem(
            f"it expected {show(receipt.get('expected_devices'))} devices, but {slice_.name} has"
            f" {slice_.devices} ({slice_.chips} chips x {slice_.generation.devices_per_chip} per"
            " chip)"
        )
    if receipt.get("process_count") != slice_.vms:
        problem(f"{receipt.get('process_count')} processes, but {slice_.name} has {slice_.vms} VMs")
    if receipt.get("device_count") != slice_.devices:
        count = receipt.get("device_count")
        problem(
            f"{count} device{'' if count == 1 else 's'}, but {slice_.name} has {slice_.devices}"
        )
    workers = receipt.get("workers")
    if not isinstance(workers, list) or not all(isinstance(w, dict) for w in workers):
        problem("its workers are not a list of worker entries")
        return result
    if len(workers) != slice_.vms:
        problem(f"{len(workers)} worker receipts listed, not {slice_.vms}")
    files = [str(w.get("file")) for w in workers]
    indices = [w.get("worker") for w in workers]
    if len(set(files)) != len(files) or len(set(map(repr, indices))) != len(indices):
        problem("a worker or a worker receipt file is listed more than once")
    if sorted(map(repr, indices)) != sorted(repr(i) for i in range(len(workers))):
        problem(f"the workers listed are {indices}, not 0 to {len(workers) - 1} once each")
    processes = [w.get("process_index") for w in workers]
    if sorted(map(repr, processes)) != sorted(repr(i) for i in range(len(workers))):
        problem(
            f"the workers' process_index values are {processes}, not 0 to {len(workers) - 1}"
            " once each"
        )
    for entry in workers:
        for text in _check_worker(entry, folder, slice_.name, expect):
            problem(text)
    if result.ok:
        backend = expect or "its"
        result.facts.append(
            f"{slice_.vms} workers agree: {slice_.devices} devices, every worker receipt "
            f"matches its hash and proves a run on {backend} backend"
        )
    return result


def _check_worker(
    entry: dict[str, Any], folder: Path | None, accelerator: str, expect: str | None
) -> list[str]:
    worker = entry.get("worker")
    if entry.get("ok") is not True:
        return [f"worker {worker} did not pass every check"]
    if folder is None:
        return []
    name = entry.get("file")
    if not isinstance(name, str) or not _plain_name(name):
        return [f"worker {worker}'s receipt {name!r} is not a file name inside the receipt folder"]
    path = folder / name
    if not path.exists():
        return [f"{name} is missing: keep the worker receipts beside the slice's"]
    try:
        data = load_receipt(path)
    except BadInput as err:
        return [f"worker {worker}: {err}"]
    if data.get("receipt_sha256") != entry.get("receipt_sha256"):
        return [f"{name} does not match the hash the slice receipt lists"]
    if data.get("process_index") != worker or data.get("process_index") != entry.get(
        "process_index"
    ):
        return [
            f"{name} is process {data.get('process_index')}, listed as worker {worker} with"
            f" process_index {entry.get('process_index')}"
        ]
    check = check_receipt(data, expect, accelerator, folder=folder)
    return [f"worker {worker} ({name}): {p}" for p in check.problems]


def _canonical(accelerator: object) -> str | None:
    try:
        return catalog.parse_accelerator(str(accelerator)).name
    except catalog.UnknownAcceleratorError:
        return None


def _plain_name(name: str) -> bool:
    """A file name, not a path: no folder, no '..', nothing outside the receipt's folder."""
    return bool(name) and name not in (".", "..") and Path(name).name == name and "\\" not in name
