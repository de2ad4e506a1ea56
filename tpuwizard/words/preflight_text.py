"""What a front end says of the preflight before a create (``launch``, ``up``, plain mode): each
check's line, then why nothing was created, or how SSH will log in under OS Login."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpuwizard.words.oslogin_text import IMPORT_CHOSEN

if TYPE_CHECKING:
    from tpuwizard.session.preflight import BeforeCreate


def before_create_lines(before: BeforeCreate, skip_hint: str = "") -> list[str]:
    """The lines to say; ``skip_hint`` names the way to skip the checks, where there is one."""
    lines = [f"Preflight: {check.line()}" for check in before.result.checks]
    if before.refused:
        lines.append(
            f"Nothing was created: {len(before.result.failures)} check(s) before create failed "
            "(each line above says how to fix it). `tpuwizard preflight` runs them again"
            + (f"; {skip_hint}." if skip_hint else ".")
        )
    elif before.result.imports_login_key:
        lines.append(IMPORT_CHOSEN)
    return lines
