"""Multi-host slices: every VM runs the verifier at once, joined by jax.distributed.

A slice such as v5litepod-16 is 4 VMs of 4 chips. Running the program on one VM only hangs in
initialisation (a frequent beginner failure), so tpuwizard starts it on every worker together,
checks that they agree on versions first, and writes a slice receipt that lists each worker's.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard_verify.tpu_verify import receipt_hash

from tpuwizard.core import untrusted
from tpuwizard.core.errors import SliceIncomplete, VersionMismatch
from tpuwizard.core.evidence.receipt import (
    MAX_INTEGER_DIGITS,
    MAX_JSON_DEPTH,
    MAX_RECEIPT_FILE_BYTES,
)
from tpuwizard.core.plan import catalog

SLICE_RECEIPT = "slice-receipt.json"


def free_port() -> int:
    """A free port on this machine, for the sandbox's coordinator (all workers are local)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class JoinPlan:
    processes: int
    global_devices: int
    coordinator: str | None  # None on Cloud TPU: jax.distributed detects it
    timeout: int

    def args(self, worker: int) -> list[str]:
        if self.processes == 1:
            return []
        args = [
            "--num-processes",
            str(self.processes),
            "--global-devices",
            str(self.global_devices),
            "--join-timeout",
            str(self.timeout),
        ]
        if self.coordinator:
            args += ["--process-id", str(worker), "--coordinator", self.coordinator]
        return args


def check_versions(versions: dict[int, dict[str, Any]]) -> None:
    """Raise VersionMismatch naming the workers whose versions differ from worker 0's."""
    keys = ("jax", "jaxlib", "libtpu")
    if len(versions) < 2:
        return
    first = min(versions)
    reference = {k: versions[first].get(k) for k in keys}
    odd = {
        w: {k: v.get(k) for k in keys}
        for w, v in versions.items()
        if {k: v.get(k) for k in keys} != reference
    }
    if odd:
        detail = "; ".join(f"w{w} has {v}" for w, v in sorted(odd.items()))
        raise VersionMismatch(
            f"the workers disagree on versions: w{first} has {reference}; {detail}"
        )


def joined_workers(checks: dict[int, dict[str, bool]]) -> list[int]:
    return sorted(w for w, c in checks.items() if c.get("join"))


def incomplete(workers: int, checks: dict[int, dict[str, bool]], timeout: float) -> None:
    """Raise SliceIncomplete when a worker never reported joining."""
    missing = [w for w in range(workers) if "join" not in checks.get(w, {})]
    waited = [w for w in range(workers) if checks.get(w, {}).get("join") is False]
    if missing or waited:
        # Those that said "still waiting" were ready; the others never came (or died).
        raise SliceIncomplete(missing or waited, waited if missing else [], timeout)


def write_slice_receipt(
    run_dir: Path, slice_: catalog.Slice, receipts: dict[int, Path]
) -> dict[str, Any]:
    """The slice receipt: every worker's receipt hash, and whether they agree."""
    # Each fetched from its worker: read as untrusted input (a regular file, bounded JSON).
    data = {
        w: untrusted.read_json(p, MAX_RECEIPT_FILE_BYTES, MAX_JSON_DEPTH, MAX_INTEGER_DIGITS)
        for w, p in sorted(receipts.items())
    }
    agree = {
        "process_count": sorted({r.get("process_count") for r in data.values()}),
        "device_count": sorted({r.get("device_count") for r in data.values()}),
        "jax": sorted({str(r.get("jax")) for r in data.values()}),
        "jaxlib": sorted({str(r.get("jaxlib")) for r in data.values()}),
        "libtpu": sorted({str(r.get("libtpu")) for r in data.values()}),
    }
    consistent = all(len(v) == 1 for v in agree.values())
    receipt: dict[str, Any] = {
        "kind": "slice",
        "accelerator": slice_.name,
        "expected_processes": slice_.vms,
        "expected_devices": slice_.devices,
        "process_count": agree["process_count"][0] if consistent else None,
        "device_count": agree["device_count"][0] if consistent else None,
        "agree": consistent,
        "workers": [
            {
                "worker": w,
                "file": receipts[w].name,
                "receipt_sha256": r["receipt_sha256"],
                "process_index": r.get("process_index"),
                "ok": bool(r.get("ok")),
            }
            for w, r in data.items()
        ],
    }
    receipt["ok"] = (
        consistent
        and all(w["ok"] for w in receipt["workers"])
        and receipt["process_count"] == slice_.vms
    )
    receipt["receipt_sha256"] = receipt_hash(receipt)
    (run_dir / SLICE_RECEIPT).write_text(json.dumps(receipt, indent=2, sort_keys=True) + "\n")
    return receipt
