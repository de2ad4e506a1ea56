"""What the installed ``colab`` CLI and the account say around a run: the CLI's version and the
commands it lacks, and, where it has ``usage`` (0.8.0), the account's compute-unit balance, hourly
rate and active assignments before the run, and the assignments again once the session stopped.

``usage`` counts every active assignment of the account (the runtimes of the browser's notebooks
too), so a change in it is a hint, never the check: ``colab sessions`` listing the run's own
named session (run.py's stop_session) stays the check.
"""

from __future__ import annotations

from tpuwizard.core.colab.program import ColabCallFailed, ColabProgram, lacking
from tpuwizard.core.launch.events.colab import ColabAccount, ColabAssignmentsAfter


def read_account(program: ColabProgram, practice: bool = False) -> ColabAccount:
    """The CLI's version, what it lacks, and the account's usage where it has ``usage``;
    ``practice``: the program is the practice stand-in, which plays a version."""
    version = program.version()
    lacks = lacking(version)
    if "usage" in lacks:
        return ColabAccount(version, lacks, practice=practice)
    try:
        usage = program.usage()
    except ColabCallFailed as err:
        return ColabAccount(version, lacks, usage_problem=err.detail or err.kind, practice=practice)
    if usage is None:  # a version it did not name, and no usage command
        return ColabAccount(version, ("usage",), practice=practice)
    return ColabAccount(
        version, lacks, usage.balance, usage.rate_hourly, usage.assignments, practice=practice
    )


def assignments_after(program: ColabProgram, before: int) -> ColabAssignmentsAfter:
    """``usage``'s active assignments once the run's session was stopped."""
    try:
        usage = program.usage()
    except ColabCallFailed as err:
        return ColabAssignmentsAfter(before, None, err.detail or err.kind)
    if usage is None:
        return ColabAssignmentsAfter(before, None, "colab usage is no longer there")
    return ColabAssignmentsAfter(before, usage.assignments)
