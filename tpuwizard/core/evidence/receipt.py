"""Receipts: the verifier's proof of where a computation ran, and how tpuwizard checks one.

The hash is the course's: the first 16 hex digits of SHA-256 over the canonical JSON
(``sort_keys=True``, separators ``(",", ":")``) of every field but ``receipt_sha256``. The one
implementation lives in the verifier, which tpuwizard ships unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard_verify.tpu_verify import MARKER, PLATFORMS, receipt_hash

from tpuwizard.core import untrusted
from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt_rules import consistency_problems
from tpuwizard.core.plan import catalog
from tpuwizard.core.terminal_text import without_sgr
from tpuwizard.core.untrusted import MIB

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
    """Read a receipt file; a missing, unreadable or malformed one raises :class:`BadInput`
    (:func:`read_receipt`, without the words on which line of a log was judged)."""
    return read_receipt(path)[0]


# A receipt is a few KiB; a saved log or printout it is read from may be a whole training run's.
MAX_RECEIPT_FILE_BYTES = 256 * MIB


def read_receipt(path: Path) -> tuple[dict[str, Any], list[str]]:
    """(the receipt in ``path``, what was judged where the file is a saved log or printout).

    Only a regular file is read (a FIFO would block forever, a folder is no receipt), at most
    :data:`MAX_RECEIPT_FILE_BYTES`. A UTF-8 byte-order mark is accepted. A key given twice is
    refused: the file would show one value while Python keeps the other, so a tampered value
    could hide behind an honest one. In a log, the receipt judged is :func:`pick_receipt`'s.
    """
    path = Path(path)
    try:
        raw = untrusted.read_small(path, MAX_RECEIPT_FILE_BYTES)
    except FileNotFoundError:
        raise BadInput(f"No receipt at {path}: give the path of a receipt.json.") from None
    except untrusted.NotASmallFile as err:
        raise BadInput(f"{path} is refused: {err.why}. Give the path of a receipt.json.") from None
    except OSError as err:
        raise BadInput(f"Cannot read {path} ({err.strerror}).") from None
    notes: list[str] = []
    try:
        text = raw.decode("utf-8-sig")
        picked = pick_receipt(text, path)
        if picked is not None:
            text, notes = picked
        data = parse_receipt_json(text)
    except untrusted.DuplicateKey as err:
        raise BadInput(f"{path} gives the key {err.key!r} twice: the receipt is refused.") from None
    except untrusted.BadJson as err:
        raise BadInput(
            f"{path} is refused: {err}; give a receipt.json the verifier wrote."
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise BadInput(
            f"{path} holds no receipt: it has neither the course's line "
            f"'{COURSE_PREFIX} {{...}}' nor the verifier's '{MARKER}{{...}}' line, and is not "
            f"a receipt.json either (read as JSON: {err}). Give the receipt.json the verifier "
            "wrote, the file the course's output was saved to, or worker 0's saved log "
            "(kubectl logs ... > log.txt)."
        ) from None
    if not isinstance(data, dict) or "receipt_sha256" not in data:
        raise BadInput(
            f"{path} is JSON but not a tpuwizard or course receipt (it has no receipt_sha256)."
        )
    return data, notes


# A receipt nests 4 deep and its largest integer is a byte count; far past these limits the
# parser itself fails (RecursionError, or ValueError past 4300 digits), so they are checked first.
MAX_JSON_DEPTH = 64
MAX_INTEGER_DIGITS = 20


def parse_receipt_json(text: str) -> Any:
    """``text`` as JSON within a receipt's bounds, no key given twice, no NaN or Infinity;
    :class:`~tpuwizard.core.untrusted.BadJson` or a JSONDecodeError otherwise."""
    problem = json_limit_problem(text)
    if problem:  # worded for a receipt ("no receipt does")
        raise untrusted.BadJson(problem)
    return untrusted.loads(text, MAX_JSON_DEPTH, MAX_INTEGER_DIGITS)


def json_limit_problem(text: str) -> str | None:
    """Why ``text`` is past the limits a receipt can need, before any parser sees it; else None."""
    problem = untrusted.json_limit_problem(text, MAX_JSON_DEPTH, MAX_INTEGER_DIGITS)
    if problem and "nests" in problem:
        return f"{problem}, and no receipt does"
    if problem:
        return (
            f"{problem.split(' (')[0]}; a receipt's integers have at most "
            f"{MAX_INTEGER_DIGITS} digits"
        )
    return None


# How the course prints its receipt (lesson "Select a TPU slice": print("Verified runtime
# receipt:", json.dumps(receipt, sort_keys=True))), in the output it saves to tpu-report.txt.
COURSE_PREFIX = "Verified runtime receipt:"


def pick_receipt(text: str, path: Path | str = "the log") -> tuple[str, list[str]] | None:
    """The JSON of the receipt a saved log or printout proves, and what was judged, in words;
    None when ``text`` is a receipt file itself or holds no receipt line.

    The rule: where the text holds the verifier's ``TPUWIZARD {"kind": "receipt", ...}`` lines
    (worker 0's log of an exported job, where the user's script runs after the verifier and may
    print anything, the course's own line included), the verifier's last one decides and
    course-format lines are not judged. Where it holds none, the last ``Verified runtime
    receipt: {...}`` line does (the course's tpu-report.txt). A verifier line that cannot be
    read after the last readable one may be a later receipt: the file is refused, saying which
    line, rather than an earlier receipt judged in its place.
    """
    if text.lstrip().startswith("{"):
        return None  # a receipt file itself
    readable: list[tuple[int, dict[str, Any]]] = []
    unreadable: tuple[int, str] | None = None  # the last one after the last readable receipt
    course: list[tuple[int, str]] = []
    # A terminal's colours saved with the output (`script`, a coloured tee) are no part of it:
    # JSON escapes a real ESC, so a raw one in the line is decoration.
    for number, line in enumerate(map(without_sgr, text.splitlines()), 1):
        start = line.find(MARKER)
        body = line[start + len(MARKER) :].strip() if start >= 0 else ""
        if body[:1] in ("{", "["):  # the verifier's machine line: a check, a receipt, or torn
            found = _logged_receipt(body)
            if isinstance(found, dict):
                readable.append((number, found))
                unreadable = None
            elif found is not None:
                unreadable = (number, found)
        elif COURSE_PREFIX in line:
            course.append((number, line.split(COURSE_PREFIX, 1)[1].strip()))
    if unreadable is not None:
        number, why = unreadable
        earlier = (
            f"the receipt on line {readable[-1][0]} is not judged in its place"
            if readable
            else "no receipt before it can be judged in its place"
        )
        raise BadInput(
            f"{path} line {number} carries the verifier's marker but cannot be read ({why}): "
            f"it may be a later receipt, so {earlier}. Give worker 0's whole log "
            "(kubectl logs ... > log.txt)."
        )
    if readable:
        number, receipt = readable[-1]
        notes = [f"the verifier's receipt on line {number} is judged" + _of(len(readable))]
        if course:
            lines = ", ".join(str(n) for n, _ in course)
            notes.append(
                f"the course-format receipt line(s) on line {lines} are not judged: in a log "
                "with the verifier's receipt line, the verifier's last one decides"
            )
        return json.dumps(receipt), notes
    if course:
        number, body = course[-1]
        return body, [f"the course's receipt line on line {number} is judged" + _of(len(course))]
    return None


def _of(count: int) -> str:
    return f" (the last of {count})" if count > 1 else ""


def _logged_receipt(body: str) -> dict[str, Any] | str | None:
    """A verifier line's receipt; why it cannot be read (a string); None for another kind."""
    try:
        payload = parse_receipt_json(body)
    except untrusted.DuplicateKey as err:
        return f"it gives the key {err.key!r} twice"
    except untrusted.BadJson as err:
        return str(err)
    except json.JSONDecodeError:
        return "it is not whole JSON: cut short, or edited"
    if not isinstance(payload, dict):
        return "it is not a JSON object"
    if payload.get("kind") != "receipt":
        return None
    receipt = payload.get("receipt")
    return receipt if isinstance(receipt, dict) else "its receipt is not a JSON object"


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
                f"{count} device{'' if count == 1 else 's'}, but {slice_.name} has "
                f"{slice_.devices} "
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
