"""``runs/<id>/chain.json``: the attempts of a run that resumed after preemption, in order.

Each entry says where the attempt ran (zone, node), when, how it ended, which checkpoint set it
resumed from, the sha256 of its verifier receipt (kept in ``attempts/<n>/receipt.json``), and the
sha256 of the entry before it, so an entry cannot be dropped, reordered or edited without
``receipt check`` saying so.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CHAIN_FILE = "chain.json"
ENDINGS = ("finished", "failed", "preempted", "gone", "stopped")


@dataclass(frozen=True)
class ChainEntry:
    attempt: int
    zone: str
    node: str
    started_at: float
    ended_at: float
    ended: str  # one of ENDINGS
    resumed_from: str | None  # the checkpoint set put back before the script started
    script_exit: int | None
    receipt: str | None  # relative to the run folder
    receipt_sha256: str | None
    previous_sha256: str | None = None


def entry_sha256(entry: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def append_entry(run_dir: Path, run_id: str, entry: ChainEntry) -> dict[str, Any]:
    """Add ``entry`` (linked to the last one) to the run's chain.json; the entry as written."""
    path = run_dir / CHAIN_FILE
    data: dict[str, Any] = (
        json.loads(path.read_text()) if path.exists() else {"kind": "chain", "run_id": run_id}
    )
    attempts: list[dict[str, Any]] = data.setdefault("attempts", [])
    written = asdict(entry)
    written["previous_sha256"] = entry_sha256(attempts[-1]) if attempts else None
    attempts.append(written)
    part = path.with_name(f".{CHAIN_FILE}.part")
    part.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(part, path)
    return written


def check_chain(data: dict[str, Any], folder: Path) -> tuple[list[str], list[str]]:
    """(facts, problems) of a chain.json read from ``folder``: links, order, receipts."""
    facts: list[str] = []
    problems: list[str] = []
    attempts = data.get("attempts")
    if data.get("kind") != "chain" or not isinstance(attempts, list) or not attempts:
        return facts, ["it is not a chain of attempts (no 'attempts' list)"]
    previous: dict[str, Any] | None = None
    for index, entry in enumerate(attempts, start=1):
        n = entry.get("attempt")
        if n != index:
            problems.append(f"entry {index} says it is attempt {n}: the order was changed")
        link = entry_sha256(previous) if previous is not None else None
        if entry.get("previous_sha256") != link:
            problems.append(f"attempt {index}: its link to the entry before does not match")
        if entry.get("ended") not in ENDINGS:
            problems.append(f"attempt {index}: unknown ending {entry.get('ended')!r}")
        last = index == len(attempts)
        if not last and entry.get("ended") not in ("preempted", "gone"):
            problems.append(f"attempt {index} ended {entry.get('ended')}, yet another followed")
        receipt = entry.get("receipt")
        if receipt:
            path = folder / receipt
            if not path.is_file():
                problems.append(f"attempt {index}: its receipt {receipt} is missing")
            elif file_sha256(path) != entry.get("receipt_sha256"):
                problems.append(f"attempt {index}: its receipt {receipt} was changed")
        resumed = entry.get("resumed_from") or "the start"
        facts.append(
            f"attempt {index} in {entry.get('zone')} on {entry.get('node')}: from {resumed}, "
            f"ended {entry.get('ended')}"
        )
        previous = entry
    return facts, problems
