"""``runs/<id>/chain.json``: the attempts of a run that resumed after preemption, in order.

Each entry says where the attempt ran (zone, node), when, how it ended, which checkpoint set it
resumed from, the sha256 of its verifier receipt (kept in ``attempts/<n>/receipt.json``), and the
sha256 of the entry before it, so an entry cannot be dropped, reordered or edited without
``receipt check`` saying so. The last entry has none after it to link it: ``chain_sha256``, over
the whole document, covers it (and the stop record), as ``receipt_sha256`` covers a receipt.
Each attempt's receipt is also checked on its own, as ``receipt check`` checks a receipt, so a
chain whose links were recomputed still refuses a receipt edited inside it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core import untrusted
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import check_receipt, load_receipt

CHAIN_FILE = "chain.json"
ATTEMPTS_FOLDER = "attempts"  # attempts/<n>/ of a resumed run: each attempt's receipt and output
# At most 21 attempts (--max-restarts 20) of a few hundred bytes each, nested 4 deep: a file past
# these is none tpuwizard wrote (and past the depth Python's parser fails with RecursionError).
MAX_CHAIN_BYTES = 1 * untrusted.MIB
MAX_CHAIN_DEPTH = 16
# "sigterm": its script got a SIGTERM its job recorded, and ran again on the same node.
ENDINGS = ("finished", "failed", "preempted", "gone", "sigterm", "stopped")
RESUMED_AFTER = ("preempted", "gone", "sigterm")  # the endings another attempt follows


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
    # The first attempt of a run started with --resume-from: the earlier run's id and the
    # sha256 of its chain's last entry (None when it has no chain: killed in its first attempt).
    earlier_run: dict[str, str | None] | None = None


def entry_sha256(entry: dict[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(entry, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of an attempt's receipt (a small regular file, else an OSError)."""
    from tpuwizard.core.evidence.receipt import MAX_RECEIPT_FILE_BYTES

    return hashlib.sha256(untrusted.read_small(path, MAX_RECEIPT_FILE_BYTES)).hexdigest()


def read_chain(path: Path) -> dict[str, Any]:
    """The chain at ``path`` as untrusted input (a small regular file, bounded JSON, no key
    given twice); :class:`BadInput` saying why when it cannot be one."""
    try:
        data = untrusted.read_json(path, MAX_CHAIN_BYTES, MAX_CHAIN_DEPTH)
    except FileNotFoundError:
        raise BadInput(f"No chain at {path}: give a run folder's chain.json.") from None
    except (OSError, ValueError) as err:
        raise BadInput(
            f"{path} cannot be read as a chain of attempts: {untrusted.describe(err)}."
        ) from None
    if not isinstance(data, dict):
        raise BadInput(f"{path} is JSON but not a chain of attempts (not a JSON object).")
    return data


def _own_chain(path: Path) -> dict[str, Any]:
    """This run's chain, being extended: read as :func:`read_chain` reads any (a FIFO put in its
    place must not hang the run)."""
    data = untrusted.read_json(path, MAX_CHAIN_BYTES, MAX_CHAIN_DEPTH)
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a chain of attempts")
    return data


def chain_sha256(data: dict[str, Any]) -> str:
    """The whole chain's hash: every field but itself, as canonical JSON."""
    return entry_sha256({k: v for k, v in data.items() if k != "chain_sha256"})


def _write(path: Path, data: dict[str, Any]) -> None:
    """The chain sealed with its chain_sha256, replaced at once (a reader never sees half)."""
    data["chain_sha256"] = chain_sha256(data)
    part = path.with_name(f".{CHAIN_FILE}.part")
    part.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(part, path)


def append_entry(run_dir: Path, run_id: str, entry: ChainEntry) -> dict[str, Any]:
    """Add ``entry`` (linked to the last one) to the run's chain.json; the entry as written."""
    path = run_dir / CHAIN_FILE
    data: dict[str, Any] = (
        _own_chain(path) if path.exists() else {"kind": "chain", "run_id": run_id}
    )
    attempts: list[dict[str, Any]] = data.setdefault("attempts", [])
    written = asdict(entry)
    written["previous_sha256"] = entry_sha256(attempts[-1]) if attempts else None
    attempts.append(written)
    _write(path, data)
    return written


def earlier_run_link(folder: Path, run_id: str) -> dict[str, str | None]:
    """The link from a new chain to the chain of the run in ``folder`` (its last entry)."""
    try:
        attempts = _own_chain(folder / CHAIN_FILE).get("attempts") or []
    except (OSError, ValueError, AttributeError):
        attempts = []
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        attempts = []
    last = entry_sha256(attempts[-1]) if attempts else None
    return {"run_id": run_id, "last_entry_sha256": last}


def record_stop(run_dir: Path, by: str, detail: str) -> None:
    """Why no further attempt was made (``budget``, ``max_restarts``, ``max_run``), beside the
    attempts: the last entry says how its node went, this says why no new one came."""
    path = run_dir / CHAIN_FILE
    data = _own_chain(path)
    data["stopped"] = {"by": by, "detail": detail}
    _write(path, data)


def _check_earlier(link: Any, folder: Path) -> tuple[list[str], list[str]]:
    """The first entry's link to an earlier run's chain, checked where that run's folder is
    beside this one (as runs/ holds them)."""
    if not isinstance(link, dict) or not isinstance(link.get("run_id"), str):
        return [], ["attempt 1: its link to an earlier run is not {run_id, last_entry_sha256}"]
    run_id, want = link["run_id"], link.get("last_entry_sha256")
    earlier = folder.parent / run_id / CHAIN_FILE
    if not earlier.is_file():
        if want is None:
            return [f"resumed from run {run_id}, which had no chain"], []
        return [f"resumed from run {run_id} (its folder is not beside this one: not checked)"], []
    got = earlier_run_link(earlier.parent, run_id)["last_entry_sha256"]
    if got != want:
        return [], [f"attempt 1: its link to run {run_id}'s chain does not match that chain"]
    return [f"resumed from run {run_id}, whose chain's last entry matches the link"], []


def check_chain(
    data: dict[str, Any],
    folder: Path,
    expect: str | None = None,
    accelerator: str | None = None,
) -> tuple[list[str], list[str]]:
    """(facts, problems) of a chain.json read from ``folder``: links, order, receipts. Each
    attempt's receipt is checked as ``receipt check`` checks one, against ``expect`` and
    ``accelerator`` too: a chain proves a platform only where every attempt that ran the
    script kept a receipt proving it."""
    if accelerator:  # an unknown name is bad input, even where no attempt kept a receipt
        from tpuwizard.core.plan import catalog

        try:
            catalog.parse_accelerator(accelerator)
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
    facts: list[str] = []
    problems: list[str] = []
    attempts = data.get("attempts")
    if data.get("kind") != "chain" or not isinstance(attempts, list) or not attempts:
        return facts, ["it is not a chain of attempts (no 'attempts' list)"]
    if not all(isinstance(entry, dict) for entry in attempts):
        return facts, ["its attempts are not all entries (objects)"]
    sealed = data.get("chain_sha256")
    if sealed is None:
        problems.append(
            "it has no chain_sha256, so its last attempt is covered by no hash (the chain was "
            "edited, or written by a tpuwizard that did not seal chains)"
        )
    elif sealed != chain_sha256(data):
        problems.append(
            "its chain_sha256 does not match its contents: the chain was edited after it was "
            "written (an attempt's zone, node, times or ending, or the last attempt removed)"
        )
    asked = " and ".join(
        f"{flag} {value}"
        for flag, value in (("--expect", expect), ("--accelerator", accelerator))
        if value
    )
    previous: dict[str, Any] | None = None
    for index, entry in enumerate(attempts, start=1):
        n = entry.get("attempt")
        if n != index:
            problems.append(f"entry {index} says it is attempt {n}: the order was changed")
        if index == 1 and entry.get("earlier_run") is not None:
            more_facts, more_problems = _check_earlier(entry["earlier_run"], folder)
            facts.extend(more_facts)
            problems.extend(more_problems)
        link = entry_sha256(previous) if previous is not None else None
        if entry.get("previous_sha256") != link:
            problems.append(f"attempt {index}: its link to the entry before does not match")
        if entry.get("ended") not in ENDINGS:
            problems.append(f"attempt {index}: unknown ending {entry.get('ended')!r}")
        last = index == len(attempts)
        if not last and entry.get("ended") not in RESUMED_AFTER:
            problems.append(f"attempt {index} ended {entry.get('ended')}, yet another followed")
        receipt = entry.get("receipt")
        if receipt:
            problems.extend(_receipt_problems(index, receipt, entry, folder, expect, accelerator))
        elif asked and entry.get("script_exit") is not None:
            problems.append(
                f"attempt {index} ran the script but kept no receipt, so nothing shows where it "
                f"ran ({asked})"
            )
        resumed = entry.get("resumed_from") or "the start"
        facts.append(
            f"attempt {index} in {entry.get('zone')} on {entry.get('node')}: from {resumed}, "
            f"ended {entry.get('ended')}"
        )
        previous = entry
    if asked and not any(entry.get("receipt") for entry in attempts):
        problems.append(f"no attempt kept a receipt, so nothing proves {asked}")
    elif asked and not problems:
        facts.append(f"every attempt's receipt proves {asked}")
    stopped = data.get("stopped")
    if isinstance(stopped, dict):
        facts.append(f"no further attempt: {stopped.get('by')} ({stopped.get('detail')})")
    return facts, problems


def _receipt_problems(
    index: int,
    receipt: object,
    entry: dict[str, Any],
    folder: Path,
    expect: str | None,
    accelerator: str | None,
) -> list[str]:
    """An attempt's receipt: inside the run folder, the file the entry's sha256 names, and a
    receipt ``receipt check`` accepts on its own (its own hash, its own fields, ``expect`` and
    ``accelerator``)."""
    where = f"attempt {index}: its receipt {receipt}"
    base = folder.resolve()
    path = (base / str(receipt)).resolve()
    if not isinstance(receipt, str) or not path.is_relative_to(base):
        return [f"{where} is not in the run folder"]
    if not path.is_file():
        return [f"{where} is missing"]
    problems = []
    try:
        if file_sha256(path) != entry.get("receipt_sha256"):
            problems.append(f"{where} was changed")
        data = load_receipt(path)
    except OSError as err:
        return [f"{where} cannot be read: {untrusted.describe(err)}"]
    except BadInput as err:
        return [*problems, f"{where} cannot be read as a receipt: {err}"]
    if data.get("kind") == "slice":  # a slice's, with its workers' receipts beside it
        from tpuwizard.core.evidence.slice_receipt import check_slice_receipt

        checked = check_slice_receipt(data, path.parent, accelerator, expect)
    else:
        checked = check_receipt(data, expect, accelerator, folder=path.parent)
    return problems + [f"{where}: {problem}" for problem in checked.problems]
