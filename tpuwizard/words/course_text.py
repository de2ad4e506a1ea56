"""The course's own words where tpuwizard does a course step differently: lesson one keeps its
script's printout as ``tpu-report.txt`` (``... main.py | tee ~/tpu-report.txt``) and copies it
back with ``scp``; tpuwizard keeps every run's whole output as ``runs/<id>/output.txt``.
Shared by the wizard, plain mode and the CLI (docs/course.md maps every step)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

COURSE_REPORT = "tpu-report.txt"
OUTPUT_WORDS = "your script's whole output (the course keeps it as tpu-report.txt)"


def names_course_report(patterns: Sequence[str]) -> bool:
    return any(PurePosixPath(p.strip()).name == COURSE_REPORT for p in patterns)


def fetch_note(patterns: Sequence[str]) -> str | None:
    """Said where Files to copy back (``--fetch``) names tpu-report.txt; None otherwise."""
    if not names_course_report(patterns):
        return None
    return (
        f"In the course, {COURSE_REPORT} is your script's output tee'd to a file; tpuwizard "
        "keeps that output as output.txt in the run folder, so you need not name it. A file "
        f"named {COURSE_REPORT} comes back only if your script writes it."
    )


def not_fetched_hint(path: str) -> str | None:
    """After a named file did not come back: where the course's tpu-report.txt is instead."""
    if PurePosixPath(path).name != COURSE_REPORT:
        return None
    return (
        f"  The course's {COURSE_REPORT} is your script's output: it is in the run folder as "
        "output.txt (tpuwizard receipt check checks it)."
    )
