"""Receipts: the verifier's proof of where a computation ran, and how tpuwizard checks one.

The hash is the course's: the first 16 hex digits of SHA-256 over the canonical JSON
(``sort_keys=True``, separators ``(",", ":")``) of every field but ``receipt_sha256``. The one
implementation lives in the verifier, which tpuwizard ships unchanged.
"""

from __future__ import annotations

import json
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard_verify.tpu_verify import MARKER, PLATFORMS, receipt_hash

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt_rules import consistency_problems
from tpuwizard.core.plan import catalog
from tpuwizard.core.terminal_text import without_sgr

# What the hash proves, said wherever a receipt is checked: anyone can recompute it.
HASH_MEANING = (
    "The hash detects edits, not forgery: it shows the receipt was not changed after it was "
    "written, but anyone can write a new receipt and compute its hash."
)


@dataclass
class ReceiptCheck:
    ok: bool
    problems: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    # What the optional checks measured (perf, precision, memory, trace), shown; the precision
    # bounds are judged among the problems (receipt_rules).
    measurements: list[str] = field(default_factory=list)


def load_receipt(path: Path) -> dict[str, Any]:
    """Read a receipt file; a missing, unreadable or malformed one raises :class:`BadInput`.

    Only a regular file is opened (a FIFO would block forever, a folder is no receipt). A UTF-8
    byte-order mark is accepted. A key given twice is refused: the file would show one value
    while Python keeps the other, so a tampered value could hide behind an honest one.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise BadInput(f"No receipt at {path}: give the path of a receipt.json.") from None
    except OSError as err:
        raise BadInput(f"Cannot read {path} ({err.strerror}).") from None
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise BadInput(f"{path} is {what}: give the path of a receipt.json.")
    try:
        text = path.read_bytes().decode("utf-8-sig")
        text = course_printout_receipt(text) or logged_receipt(text) or text
        too_odd = json_limit_problem(text)
        if too_odd:
            raise BadInput(f"{path} is refused: {too_odd}; give a receipt.json the verifier wrote.")
        data = json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except _DuplicateKey as err:
        raise BadInput(f"{path} gives the key {err} twice: the receipt is refused.") from None
    except OSError as err:
        raise BadInput(f"Cannot read {path} ({err.strerror}).") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadInput(
            f"{path} is not a readable JSON receipt ({err}), nor a saved printout with the "
            f"course's line '{COURSE_PREFIX} {{...}}' or the verifier's '{MARKER}{{...}}' line: "
            "give the receipt.json the verifier wrote, the file the course's output was saved "
            "to, or worker 0's saved log (kubectl logs ... > log.txt)."
        ) from None
    if not isinstance(data, dict) or "receipt_sha256" not in data:
        raise BadInput(
            f"{path} is JSON but not a tpuwizard or course receipt (it has no receipt_sha256)."
        )
    return data


# How the course prints its receipt (lesson "Select a TPU slice": print("Verified runtime
# receipt:", json.dumps(receipt, sort_keys=True))), in the output it saves to tpu-report.txt.
COURSE_PREFIX = "Verified runtime receipt:"


def course_printout_receipt(text: str) -> str | None:
    """The JSON of the last ``Verified runtime receipt: {...}`` line of a saved printout (the
    course tees its script's output to a file), or None when ``text`` is not such a printout."""
    if text.lstrip().startswith("{"):
        return None  # a receipt file itself
    # A terminal's colours saved with the output (`script`, a coloured tee) are no part of it:
    # JSON escapes a real ESC, so a raw one in the line is decoration.
    found = [
        line.split(COURSE_PREFIX, 1)[1].strip()
        for line in map(without_sgr, text.splitlines())
        if COURSE_PREFIX in line
    ]
    return found[-1] if found else None


def logged_receipt(text: str) -> str | None:
    """The receipt in the last ``TPUWIZARD {"kind": "receipt", ...}`` line of a saved log (worker
    0's output where tpuwizard does not run the job: ``kubectl logs`` of an exported JobSet or
    xpk workload), as JSON text; None when ``text`` holds no such line."""
    if text.lstrip().startswith("{"):
        return None  # a receipt file itself
    found = None
    for line in map(without_sgr, text.splitlines()):
        start = line.find(MARKER)
        if start < 0 or json_limit_problem(line[start + len(MARKER) :]):
            continue
        try:  # a key given twice is refused here too (load_receipt says so)
            payload = json.loads(
                line[start + len(MARKER) :], object_pairs_hook=_refuse_duplicate_keys
            )
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict) and payload.get("kind") == "receipt":
            found = payload.get("receipt")
    return json.dumps(found) if isinstance(found, dict) else None


# A receipt nests 4 deep and its largest integer is a byte count; far past these limits the
# parser itself fails (RecursionError, or ValueError past 4300 digits), so they are checked first.
MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 20
# A string (skipped whole, or to the end when unterminated), a bracket, or a number.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]|-?(\d+)(\.\d+)?([eE][-+]?\d+)?', re.S)


def json_limit_problem(text: str) -> str | None:
    """Why ``text`` is past the limits a receipt can need, before any parser sees it; else None."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return f"its JSON nests deeper than {MAX_JSON_DEPTH} levels, and no receipt does"
        elif first in "]}":
            depth -= 1
        elif first != '"':
            digits, fraction, exponent = token.groups()
            if fraction is None and exponent is None and len(digits) > MAX_INTEGER_DIGITS:
                return (
                    f"it holds a {len(digits)}-digit integer; a receipt's integers have at most "
                    f"{MAX_INTEGER_DIGITS} digits"
                )
    return None


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _DuplicateKey(repr(key))
        data[key] = value
    return data


def check_receipt(
    receipt: dict[str, Any],
    expect: str | None = None,
    accelerator: str | None = None,
    folder: Path | None = None,
) -> ReceiptCheck:
    """Does this receipt prove a successful run on ``expect`` with ``accelerator``'s devices?

    ``folder`` is where the receipt lies; trace files it lists are looked for there.
    """
    if expect is not None and expect not in PLATFORMS:
        raise BadInput(f"--expect must be one of {', '.join(PLATFORMS)}, not '{expect}'.")
    slice_ = None
    if accelerator:
        try:
            slice_ = catalog.parse_accelerator(accelerator)
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
    result = ReceiptCheck(ok=True)

    def problem(text: str) -> None:
        result.ok = False
        result.problems.append(text)

    recorded, actual = receipt.get("receipt_sha256"), receipt_hash(receipt)
    if recorded != actual:
        problem(
            f"the hash does not match its contents (recorded {recorded}, computed {actual}):"
            " the receipt was edited after it was written"
        )
    else:
        result.facts.append(f"hash {actual} matches")
    for text in consistency_problems(receipt):
        problem(text)
    observed = receipt.get("observed_backend")
    wanted = expect or receipt.get("expected_backend")
    if receipt.get("expected_backend") != observed:
        ran = "no backend started, so nothing ran" if observed is None else f"ran on {observed}"
        problem(f"it asked for {receipt.get('expected_backend')} but {ran}")
    if expect is not None and observed != expect:
        backend = "no backend started" if observed is None else f"the backend is {observed}"
        problem(f"{backend}, not the expected {expect}")
    placed = receipt.get("platform")
    if placed is not None and placed != wanted:
        problem(f"the prediction's output was on {placed}, not {wanted}")
    count = receipt.get("device_count")
    if slice_ is not None:
        if count != slice_.devices:
            problem(
                f"{count} devices, but {slice_.name} has {slice_.devices} "
                f"({slice_.chips} chips x {slice_.generation.devices_per_chip} per chip)"
            )
        processes = receipt.get("process_count", 1)
        if processes != slice_.vms:
            problem(f"it ran as {processes} process(es), but {slice_.name} has {slice_.vms} VMs")
        if wanted == "tpu":
            kinds = set(receipt.get("device_kinds") or [])
            want_kind = slice_.generation.device_kind
            if kinds != {want_kind}:
                problem(f"device kind {sorted(kinds)}, but {slice_.name} is '{want_kind}'")
    if result.ok:
        result.facts.append(f"{count} {observed} device(s), contract held, all checks passed")
    result.measurements.extend(measurements(receipt, folder))
    return result


def measurements(receipt: dict[str, Any], folder: Path | None = None) -> list[str]:
    """One line per optional measurement the receipt holds; odd shapes are named, not raised."""
    lines: list[str] = []
    perf = receipt.get("perf")
    if isinstance(perf, dict) and "bf16_tflops" in perf:
        peak = perf.get("peak_fraction")
        lines.append(
            f"perf: bf16 {perf.get('bf16_tflops')} TFLOP/s, fp32 {perf.get('fp32_tflops')} "
            f"TFLOP/s on a {perf.get('matmul_size')}-cube matmul "
            f"({perf.get('data', 'constant data')}, best of {perf.get('trials', 1)})"
            + (
                f", {100 * peak:.1f}% of {perf.get('device_kind')}'s "
                f"{perf.get('peak_bf16_tflops')} TFLOP/s bf16 peak"
                if isinstance(peak, int | float)
                else ", no peak figure for this device"
            )
        )
    precision = receipt.get("precision")
    if isinstance(precision, dict):
        for variant in ("fp32", "bf16", "int8"):
            entry = precision.get(variant)
            if not isinstance(entry, dict):
                lines.append(f"precision {variant}: missing or malformed")
                continue
            lines.append(
                f"precision {variant}: max |error| {_num(entry.get('max_abs_error'))}, "
                f"relative {_num(entry.get('max_rel_error'))} "
                f"({entry.get('dtype')} in, {entry.get('result_dtype')} out)"
            )
    memory = receipt.get("memory")
    limit_is = receipt.get("memory_limit_is")
    if isinstance(memory, list) and limit_is:
        limits = [m.get("bytes_limit") for m in memory if isinstance(m, dict)]
        meaning = {
            "usable_hbm": "usable HBM per device",
            "jax_gpu_pool": "JAX's GPU memory pool per device, not the GPU's total memory",
        }.get(str(limit_is), str(limit_is))
        shown = ", ".join(f"{v / 2**30:.1f} GiB" for v in limits if isinstance(v, int | float))
        lines.append(f"memory bytes_limit: {shown} ({meaning})")
    trace = receipt.get("trace")
    if isinstance(trace, dict) and isinstance(trace.get("files"), list):
        files = [f for f in trace["files"] if isinstance(f, dict)]
        total = sum(int(f.get("bytes") or 0) for f in files)
        where = str(trace.get("dir"))
        line = f"trace: {len(files)} file(s), {total} bytes in {where}/"
        if folder is not None:
            base = folder / where
            present = [
                f
                for f in files
                if (base / str(f.get("path"))).is_file()
                and (base / str(f.get("path"))).stat().st_size == f.get("bytes")
            ]
            line += (
                ", all present beside the receipt"
                if len(present) == len(files)
                else f", {len(files) - len(present)} missing or changed beside the receipt"
            )
        lines.append(line)
    return lines


def usable_hbm_gib_per_chip(receipt: dict[str, Any]) -> tuple[str, float]:
    """(generation key, usable GiB per chip) from a TPU receipt's ``bytes_limit``: the smallest
    device's limit times the devices per chip. Raises :class:`BadInput` when the receipt cannot
    say (edited, not a TPU, or no memory figures)."""
    if receipt.get("receipt_sha256") != receipt_hash(receipt):
        raise BadInput("That receipt was edited after it was written: its memory figures are void.")
    if receipt.get("memory_limit_is") != "usable_hbm":
        raise BadInput(
            "That receipt's bytes_limit is not usable HBM (only a TPU receipt's is; on a GPU it "
            "is JAX's memory pool): fit keeps its fixed reserve without --receipt."
        )
    kinds = set(receipt.get("device_kinds") or [])
    gen = catalog.generation_for_device_kind(next(iter(kinds))) if len(kinds) == 1 else None
    limits = [
        m.get("bytes_limit")
        for m in receipt.get("memory") or []
        if isinstance(m, dict) and isinstance(m.get("bytes_limit"), int | float)
    ]
    if gen is None or not limits:
        raise BadInput(
            f"That receipt names no single known TPU kind with memory figures ({sorted(kinds)})."
        )
    return gen.key, min(float(v) for v in limits if v is not None) * gen.devices_per_chip / 2**30


def _num(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, int | float) else "?"


def parse_marker_line(line: str) -> dict[str, Any] | None:
    """The JSON payload of a ``TPUWIZARD {json}`` line, or None for a human-readable line."""
    text = line.strip()
    # Multi-host output may carry a "[w0] " prefix before the marker.
    start = text.find(MARKER)
    if start < 0:
        return None
    body = text[start + len(MARKER) :]
    if json_limit_problem(body):
        return None
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:
        return None
    return payload if isinstance(payload, dict) else None
