"""The course's lesson-one report ("Move your experiment to a TPU"), checked by the course's own
checks: ``main.py`` prints its report as indented JSON, then ``Completed prediction: [...]``
(twice, in the lesson's cumulative build), and the learner keeps that printout as
``tpu-report.txt``. It has no hash, so ``receipt check`` can say only what it claims:

- the lesson's ``verify_report(record, required)``: ``platform`` and ``expected`` are the
  required platform (``--expect``, else the one the report asked for), ``shape`` is ``[8]`` and
  ``dtype`` is ``float32``;
- the lesson's assert: ``max_absolute_error`` < 1e-6;
- the predictions are the course's numbers (the recorded CPU reference) within the same 1e-6.
"""

from __future__ import annotations

import json
import math
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from tpuwizard.core.errors import BadInput
from tpuwizard.core.evidence.receipt import ReceiptCheck, json_limit_problem

PREDICTION_PREFIX = "Completed prediction:"
# The lesson's recorded reference: x = arange(24).reshape(8, 3) / 8, w = [0.5, -0.25, 1], b = 1/8.
COURSE_PREDICTION = (0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625)
TOLERANCE = 1e-6  # the lesson's own bound on max_absolute_error
REPORT_MEANING = (
    "The course's report carries no hash: these checks show what it says, not that it was "
    "never edited. A run through tpuwizard also leaves a hashed receipt.json in its run folder."
)


@dataclass(frozen=True)
class CourseReport:
    """One report main.py printed and the prediction printed after it."""

    record: dict[str, Any]
    prediction: list[Any]


def read_course_report(path: Path) -> list[CourseReport] | None:
    """The reports in a saved printout of lesson one's main.py; None when ``path`` is not such a
    printout (no ``Completed prediction:`` line after a JSON report), so other checks can try."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    if PREDICTION_PREFIX not in text:
        return None
    if json_limit_problem(text):
        return None  # the receipt reader says why
    reports = parse_course_report(text)
    if not reports:
        raise BadInput(
            f"{path} has a '{PREDICTION_PREFIX}' line but no JSON report just before it: give "
            "the whole saved output of the course's main.py (its tpu-report.txt, or "
            "runs/<id>/output.txt)."
        )
    return reports


def parse_course_report(text: str) -> list[CourseReport]:
    """Each JSON object that starts a line and is followed by a ``Completed prediction:`` line."""
    decoder = json.JSONDecoder()
    found: list[CourseReport] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        if not line.startswith("{"):  # the report's own lines are indented
            continue
        try:
            record, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        rest = text[end:].lstrip().splitlines()
        if not isinstance(record, dict) or not rest or not rest[0].startswith(PREDICTION_PREFIX):
            continue
        try:
            prediction = json.loads(rest[0].removeprefix(PREDICTION_PREFIX).strip())
        except json.JSONDecodeError:
            prediction = None
        found.append(CourseReport(record, prediction if isinstance(prediction, list) else []))
    return found


def check_course_report(reports: list[CourseReport], expect: str | None) -> ReceiptCheck:
    """The course's checks on every report of the printout, each failure named."""
    check = ReceiptCheck(ok=True)
    many = len(reports) > 1
    for number, report in enumerate(reports, 1):
        where = f"report {number} of {len(reports)}: " if many else ""
        for ok, words in _checks(report, expect):
            (check.facts if ok else check.problems).append(where + words)
    check.ok = not check.problems
    return check


def _checks(report: CourseReport, expect: str | None) -> list[tuple[bool, str]]:
    record = report.record
    asked, ran = record.get("expected"), record.get("platform")
    required = expect or asked
    whose = "--expect" if expect else "the report's own expected"
    out: list[tuple[bool, str]] = []
    if ran == required and asked == required:
        out.append((True, f"platform {ran}, as requested ({whose}: {required}) [verify_report]"))
    else:
        # Say which rule failed: the report's own two platforms can agree with each other and
        # still not be what --expect requires.
        why = (
            "the report's requested and observed platforms disagree"
            if ran != asked
            else f"it is not the {required!r} that {whose} requires"
        )
        out.append(
            (
                False,
                f"platform: the report ran on {ran!r} and asked for {asked!r}; {whose} requires "
                f"{required!r} [verify_report: {why}]",
            )
        )
    shape, dtype = record.get("shape"), record.get("dtype")
    if shape == [8] and dtype == "float32":
        out.append((True, "shape [8], dtype float32 [verify_report]"))
    else:
        out.append(
            (
                False,
                f"shape {shape!r} and dtype {dtype!r}, where the lesson's are [8] and float32 "
                "[verify_report: prediction contract changed]",
            )
        )
    error = record.get("max_absolute_error")
    if _number(error) and error < TOLERANCE:
        out.append((True, f"max_absolute_error {error:g} < {TOLERANCE:g} against NumPy"))
    else:
        out.append(
            (
                False,
                f"max_absolute_error {error!r} is not below {TOLERANCE:g} (the lesson's assert)",
            )
        )
    out.append(_prediction_check(report.prediction))
    return out


def _prediction_check(prediction: list[Any]) -> tuple[bool, str]:
    if len(prediction) != len(COURSE_PREDICTION) or not all(_number(v) for v in prediction):
        return (
            False,
            f"the completed prediction {prediction!r} is not 8 numbers: the course's are "
            f"{list(COURSE_PREDICTION)}",
        )
    off = [
        i
        for i, (got, want) in enumerate(zip(prediction, COURSE_PREDICTION, strict=True))
        if abs(got - want) >= TOLERANCE
    ]
    if off:
        i = off[0]
        return (
            False,
            f"the completed prediction differs from the course's at row {i}: {prediction[i]!r} "
            f"where the course has {COURSE_PREDICTION[i]} (within {TOLERANCE:g})",
        )
    return (True, f"the completed prediction is the course's {list(COURSE_PREDICTION)}")


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
