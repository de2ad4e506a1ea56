"""The course's own words where tpuwizard does a course step differently: lesson one keeps its
script's printout as ``tpu-report.txt`` (``... main.py | tee ~/tpu-report.txt``) and copies it
back with ``scp``; tpuwizard keeps every run's whole output as ``runs/<id>/output.txt``.
Shared by the wizard, plain mode and the CLI (docs/course.md maps every step)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Resume
    from tpuwizard.core.plan.catalog import Slice

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


def route_2b_lines(name: str, zone: str, s: Slice, max_run_minutes: float, via: str) -> list[str]:
    """The course's Route 2B (Flex-start on Compute Engine: three gcloud commands) with this
    plan's names and values, then what tpuwizard does in their place: the wizard says them
    where its own Flex-start route on Compute Engine starts."""
    from tpuwizard.core.cloud.backends import VIA_RESIZE_REQUEST
    from tpuwizard.core.cloud.compute import slice_body as parts

    machine = s.machine_type or f"<the machine type of {s.name}>"
    template, request = parts.template_name(name), parts.request_name(name)
    hours = f"{max_run_minutes / 60:g}h"
    if via == VIA_RESIZE_REQUEST:
        how = "tpuwizard makes these same three (--via resize-request)"
    elif s.single_host:
        how = "tpuwizard asks for the same Flex-start VM with one instance create instead"
    else:
        how = (
            "tpuwizard makes the slice in bulk mode instead, as Google recommends for a MIG: "
            "a workload policy, a template and a BULK MIG"
        )
    return [
        "In the course, this is Route 2B, three commands:",
        f"  gcloud beta compute instance-templates create {template} --machine-type={machine} "
        f"--provisioning-model=FLEX_START --max-run-duration={hours} "
        "--instance-termination-action=DELETE --reservation-affinity=none",
        f"  gcloud beta compute instance-groups managed create {name} --zone={zone} "
        f"--template={template} --size=0",
        f"  gcloud beta compute instance-groups managed resize-requests create {name} "
        f"--zone={zone} --resize-request={request} --resize-by=1",
        f"{how}, and deletes everything at the end, verified by listing.",
    ]


def sigterm_words(workers: tuple[int, ...]) -> str:
    """The script was sent SIGTERM (by its job's wrapper) on these workers."""
    where = "worker " + ", ".join(str(w) for w in workers)
    return (
        f"Your script got SIGTERM on {where}, passed on by its job (a stop, or in practice the "
        "maintenance_sigterm fault); its exit code above says how it ended."
    )


def autocheckpoint_note(resume: Resume) -> str:
    """Said before a launch whose node gets Autocheckpoint (launch_plan's autocheckpoint_on)."""
    return (
        "Autocheckpoint: on (Google's, Preview; --no-autocheckpoint turns it off). Before a "
        "maintenance event your script gets SIGTERM and up to 5 minutes: a handler that saves "
        f"into {resume.checkpoints}/ keeps that progress (docs/guides/spot-resume.md)."
    )
