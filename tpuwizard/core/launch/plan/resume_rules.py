"""The rules of a run that resumes after preemption (``--checkpoints``), before any cloud call.

The checkpoints folder is where the script saves on the worker, relative to the script's folder
there (``.tpuwizard/work``): tpuwizard copies it home while the script runs and puts the latest
complete set back into it on a new TPU, so it must name a folder inside the script's folder,
never a path outside it nor the folder itself.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Protocol

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.errors import BadInput, shown
from tpuwizard.core.launch.plan.route_offers import RESUME_ROUTES
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.remote.checkpoints import CheckpointsHome
from tpuwizard.core.remote.transports import safe_relative
from tpuwizard.core.untrusted import usable_amount


class ResumeFields(Protocol):
    """What these rules read of a plan (a :class:`LaunchPlan` has it all)."""

    @property
    def accelerator(self) -> str: ...

    @property
    def slice(self) -> catalog.Slice: ...

    @property
    def budget_usd(self) -> float | None: ...

    @property
    def checkpoints(self) -> str | None: ...

    @property
    def keep(self) -> bool: ...

    @property
    def max_restarts(self) -> int: ...

    @property
    def max_run(self) -> float: ...

    @property
    def resume_from(self) -> str | None: ...

    @property
    def route(self) -> str: ...

    @property
    def run_dir(self) -> Path: ...

    @property
    def run_id(self) -> str: ...

    @property
    def script(self) -> Path | None: ...

    @property
    def zone(self) -> str: ...


DEFAULT_CHECKPOINT_EVERY_S = 60.0
DEFAULT_MAX_RESTARTS = 3
MAX_RESTARTS = 20
MIN_ATTEMPT_MINUTES = 10.0  # no attempt starts with less time left before --max-run's end
EVERY_BOUNDS_S = (1.0, 86400.0)
# --budget: what an attempt may still bill after its deadline, while its delete is verified, is
# held back from the budget, so the attempts' deadlines keep their estimated cost within it.
DELETE_ALLOWANCE_MINUTES = 2.0
CHECKPOINTS_FOLDER = "checkpoints"  # in the run folder
_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([sm]?)", re.ASCII)  # "５m" is no duration


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


def checkpoints_problem(folder: str) -> Said | None:
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
    return phrase(
        "{0} " + f"{why}: give a folder inside the script's folder, as the script sees it, such "
        "as checkpoints (letters, digits, '.', '_', '-' and '/').",
        Choice("checkpoints", shown(folder)),
    )


def resume_problems(plan: ResumeFields) -> list[Said]:
    """Why the plan's resume settings cannot run; empty when they can (or are not asked for)."""
    if plan.checkpoints is None:
        asked = [
            flag
            for flag, given in (
                ("--max-restarts", plan.max_restarts != DEFAULT_MAX_RESTARTS),
                ("--budget", plan.budget_usd is not None),
                ("--resume-from", plan.resume_from is not None),
            )
            if given
        ]
        return [f"{flag} is for a run that resumes: add --checkpoints DIR." for flag in asked]
    found: list[Said] = []
    found.extend(budget_problems(plan))
    found.extend(resume_from_problems(plan))
    problem = checkpoints_problem(plan.checkpoints)
    if problem:
        found.append(problem)
    if plan.script is None:
        found.append(
            phrase(
                "The checkpoints folder is the one your script saves into: give your script in "
                "{0} (it reads TPUWIZARD_CHECKPOINTS and TPUWIZARD_RESUME, as "
                "examples/resumable_train.py).",
                Choice("script"),
            )
        )
    if plan.route not in RESUME_ROUTES:
        found.append(
            phrase(
                "A run resumes after Google preempts its spot TPU; the "
                f"{plan.route} route is not preempted that way: choose {{0}}, or leave out "
                "{1}.",
                Choice("route", ",".join(RESUME_ROUTES)),
                Choice("checkpoints"),
            )
        )
    if plan.keep:
        found.append("--checkpoints with --keep is not supported yet: leave one of them out.")
    if not 0 <= plan.max_restarts <= MAX_RESTARTS:
        found.append(f"--max-restarts must be 0 to {MAX_RESTARTS}, not {plan.max_restarts}.")
    if plan.max_run < MIN_ATTEMPT_MINUTES:
        found.append(
            phrase(
                f"A deadline of {plan.max_run:g} minutes leaves no attempt its "
                f"{MIN_ATTEMPT_MINUTES:g} minutes: give {{0}}.",
                Choice("max_run", f"{MIN_ATTEMPT_MINUTES:g}"),
            )
        )
    return found


def budget_minutes(slice_: catalog.Slice | None, route: str, zone: str, usd: float) -> float | None:
    """Minutes of billing ``usd`` buys, less the delete allowance; None: no usable price is
    known (or an unknown type, ``slice_`` None). A figure that is not a finite amount above
    zero is none: a guard on money never runs on one."""
    per_hour = cost.hourly(slice_, route, zone) if slice_ is not None else None
    if not usable_amount(per_hour):
        return None
    return usd / per_hour * 60 - DELETE_ALLOWANCE_MINUTES


def budget_problems(plan: ResumeFields) -> list[Said]:
    """Why ``--budget`` cannot be held: not a positive sum, no usable price to hold it by, or
    too little for one attempt's ten minutes."""
    usd = plan.budget_usd
    if usd is None:
        return []
    if not math.isfinite(usd) or usd <= 0:
        return [f"--budget must be a positive number of US dollars, such as --budget 5, not {usd}."]
    slice_: catalog.Slice | None = plan.slice
    minutes = budget_minutes(slice_, plan.route, plan.zone, usd)
    if slice_ is None or minutes is None:
        figure = cost.hourly(slice_, plan.route, plan.zone) if slice_ is not None else None
        if slice_ is not None and figure is not None:  # no guard on money may run on it
            source = cost.price_origin(slice_, plan.route, plan.zone)[0]
            return [
                f"--budget cannot be held: the price for {plan.accelerator} on the "
                f"{plan.route} route in {plan.zone} is not a usable figure ({figure!r} US "
                f"dollars per hour, from the {source}). Read the prices again (tpuwizard zones "
                f"--accelerator {plan.accelerator} --refresh-prices), or leave --budget out "
                "(--max-run bounds the run)."
            ]
        return [
            f"--budget cannot be held: no price is known for {plan.accelerator} on the "
            f"{plan.route} route in {plan.zone}. Leave --budget out (--max-run bounds the run), "
            "or choose a type and zone with a price (tpuwizard fit shows them)."
        ]
    if minutes < MIN_ATTEMPT_MINUTES:
        per_hour = cost.hourly(slice_, plan.route, plan.zone) or 0.0
        need = (MIN_ATTEMPT_MINUTES + DELETE_ALLOWANCE_MINUTES) / 60 * per_hour
        return [
            f"--budget {usd:g} buys {max(0.0, minutes):.0f} minute(s) of {plan.accelerator} "
            f"({plan.route}) at about ${per_hour:.2f}/h after {DELETE_ALLOWANCE_MINUTES:g} "
            f"kept for its delete; an attempt needs {MIN_ATTEMPT_MINUTES:g}: give --budget "
            f"{math.ceil(need * 100) / 100:.2f} or more."
        ]
    return []


def earlier_run_folder(plan: ResumeFields) -> Path:
    """The folder of the run ``--resume-from`` names: beside this run's."""
    assert plan.resume_from is not None
    return plan.run_dir.parent / plan.resume_from


def resume_from_problems(plan: ResumeFields) -> list[Said]:
    """Why ``--resume-from RUN_ID`` cannot resume: not a run id, no such run, no complete set
    copied home, or a set whose files are no longer all there."""
    run_id = plan.resume_from
    if run_id is None:
        return []
    if not _RUN_ID.fullmatch(run_id) or run_id == plan.run_id:
        return [
            f"--resume-from {shown(run_id)} is not an earlier run's id: give the id of a run "
            "folder in runs/, such as --resume-from 20261129-154550-c2a0."
        ]
    folder = earlier_run_folder(plan)
    if not folder.is_dir():
        return [
            f"--resume-from {run_id}: there is no run folder {folder}. Give the id of a run "
            f"in {folder.parent} (ls {folder.parent})."
        ]
    home = CheckpointsHome(folder / CHECKPOINTS_FOLDER)
    latest = home.latest()
    if latest is None:
        return [
            f"--resume-from {run_id}: no complete checkpoint set came home in {home.folder} "
            "(only a complete set copied whole is kept: a folder with COMMITTED written last, a "
            "finished step folder or flax step file, or files that held still). "
            "Leave --resume-from out to start from the start."
        ]
    missing = home.missing_files(latest)
    if missing:
        return [
            f"--resume-from {run_id}: the set {latest.name} in {home.folder} lacks "
            f"{missing[0]} (or it changed size) since it came home, so it cannot be put back. "
            "Leave --resume-from out to start from the start."
        ]
    return []
