"""What a front end says of the preflight before a create (``launch``, ``up``, plain mode): each
check's line, then why nothing was created, or how SSH will log in under OS Login; and the
wizard's Account step's count of the project's checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.words.oslogin_text import IMPORT_CHOSEN

if TYPE_CHECKING:
    from tpuwizard.core.preflight.model import Check
    from tpuwizard.session.preflight import PreflightResult


def before_create_lines(result: PreflightResult, skip_hint: str = "") -> list[str]:
    """The lines to say of the preflight before a create (any FAIL refused it); ``skip_hint``
    names the way to skip the checks, where there is one."""
    lines = [f"Preflight: {check.line()}" for check in result.checks]
    if result.failures:
        lines.append(
            f"Nothing was created: {len(result.failures)} check(s) before create failed "
            "(each line above says how to fix it). `tpuwizard preflight` runs them again"
            + (f"; {skip_hint}." if skip_hint else ".")
        )
    elif result.imports_login_key:
        lines.append(IMPORT_CHOSEN)
    return lines


def project_preflight_words(project: str, checks: list[Check]) -> str:
    """The Account step's preflight: a line of counts, then each FAIL with its fix (what would
    refuse the TPU later). It runs the project's checks alone, so it says why `preflight` and
    Create count more (the slice's quota and the zone's offer, issue 55.7)."""
    counts = {v: sum(c.verdict.value == v for c in checks) for v in ("PASS", "UNKNOWN", "FAIL")}
    # One line at 80 columns: the step holds it without a scroll (a practice project's name).
    head = (
        f"Project preflight of {project}: "
        + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        + " (quota, zone: at Create)"
    )
    return "\n".join([head, *(f"  {c.line()}" for c in checks if c.failed)])
