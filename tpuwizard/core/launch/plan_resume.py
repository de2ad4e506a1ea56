"""The rules of a run that resumes after preemption (``--checkpoints``), before any cloud call.

The checkpoints folder is where the script saves on the worker, relative to the script's folder
there (``.tpuwizard/work``): tpuwizard copies it home while the script runs and puts the latest
complete set back into it on a new TPU, so it must name a folder inside the script's folder,
never a path outside it nor the folder itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tpuwizard.core.choices import Said
from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.remote.transports import safe_relative

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan import LaunchPlan

DEFAULT_CHECKPOINT_EVERY_S = 60.0
DEFAULT_MAX_RESTARTS = 3
MAX_RESTARTS = 20
MIN_ATTEMPT_MINUTES = 10.0  # no attempt starts with less time left before --max-run's end
EVERY_BOUNDS_S = (1.0, 86400.0)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([sm]?)")


def parse_duration(text: str) -> float:
    """``30s``, ``5m`` or a bare number of minutes, in seconds; :class:`BadInput` otherwise."""
    match = _DURATION.fullmatch(text.strip().lower())
    seconds = None
    if match:
        number, unit = float(match.group(1)), match.group(2)
        seconds = number if unit == "s" else number * 60
    low, high = EVERY_BOUNDS_S
    if seconds is None or not low <= seconds <= high:
        raise BadInput(
            f"--checkpoint-every {shown(text)} is not a duration from 1s to 24h: give seconds "
            "(30s), minutes (5m) or a bare number of minutes (2)."
        )
    return seconds


def checkpoints_problem(folder: str) -> str | None:
    """Why ``folder`` cannot be the checkpoints folder; None when it can."""
    cleaned = folder.strip().rstrip("/")
    if cleaned.startswith("/") or cleaned.startswith("~"):
        why = "is an absolute path"
    elif ".." in cleaned.split("/"):
        why = "climbs out with '..'"
    elif cleaned in ("", "."):
        why = "is the script's folder itself"
    else:
        try:
            safe_relative(cleaned)
            return None
        except BadInput:
            why = "has a character or part a remote path may not have ('.', '-x', a space)"
    return (
        f"--checkpoints {shown(folder)} {why}: give a folder inside the script's folder, as "
        "the script sees it, such as --checkpoints checkpoints (letters, digits, '.', '_', '-' "
        "and '/')."
    )


def resume_problems(plan: LaunchPlan) -> list[Said]:
    """Why the plan's resume settings cannot run; empty when they can (or are not asked for)."""
    if plan.checkpoints is None:
        if plan.max_restarts != DEFAULT_MAX_RESTARTS:
            return ["--max-restarts is for a run that resumes: add --checkpoints DIR."]
        return []
    found: list[Said] = []
    problem = checkpoints_problem(plan.checkpoints)
    if problem:
        found.append(problem)
    if plan.script is None:
        found.append(
            "--checkpoints is the folder your script saves into: add --script FILE (the script "
            "reads TPUWIZARD_CHECKPOINTS and TPUWIZARD_RESUME, as examples/resumable_train.py)."
        )
    if plan.route != "spot":
        found.append(
            f"--checkpoints resumes a run after Google preempts its spot TPU; the {plan.route} "
            "route is not preempted that way: use --route spot, or leave --checkpoints out."
        )
    if plan.keep:
        found.append("--checkpoints with --keep is not supported yet: leave one of them out.")
    if not 0 <= plan.max_restarts <= MAX_RESTARTS:
        found.append(f"--max-restarts must be 0 to {MAX_RESTARTS}, not {plan.max_restarts}.")
    if plan.max_run < MIN_ATTEMPT_MINUTES:
        found.append(
            f"--max-run {plan.max_run:g} leaves no attempt its {MIN_ATTEMPT_MINUTES:g} minutes: "
            f"give --max-run {MIN_ATTEMPT_MINUTES:g} or more."
        )
    return found
