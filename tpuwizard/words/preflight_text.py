"""What a front end says of the preflight before a create (``launch``, ``up``, plain mode): each
check's line, then why nothing was created, or how SSH will log in under OS Login."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.words.oslogin_text import IMPORT_CHOSEN

if TYPE_CHECKING:
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
