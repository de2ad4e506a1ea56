"""``--checkpoints``, ``--checkpoint-every`` and ``--max-restarts`` (launch's and run's; launch's
also ``--budget``, ``--resume-from`` and ``--autocheckpoint``, handed to it as its ``Resume``
part): a spot run that resumes after preemption. Read before any call; the plan's rules
(plan/resume_rules.py) check the rest."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from tpuwizard.commands.common import Number, Whole
from tpuwizard.commands.options.group import option_group

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Resume
    from tpuwizard.session.kept.resume import CheckpointsAsked

F = TypeVar("F", bound=Callable[..., object])


def checkpoint_options(command: F) -> F:
    """``--checkpoints``, ``--checkpoint-every`` and ``--max-restarts``: launch's and run's."""
    # No core import here: the CLI's start must stay light (test_kept_lines.py).
    command = click.option(
        "--max-restarts",
        type=Whole(),
        help="With --checkpoints: how many times a preempted run is started again on a new TPU "
        "(default 3).",
    )(command)
    command = click.option(
        "--checkpoint-every",
        "checkpoint_every",
        metavar="DURATION",
        default="1m",
        show_default=True,
        help="With --checkpoints: how often new checkpoints are copied home (30s, 5m, or minutes).",
    )(command)
    return click.option(
        "--checkpoints",
        metavar="DIR",
        help="Spot: the folder (inside the script's folder) your script saves checkpoints in; "
        "copied to runs/<id>/checkpoints/ as it runs, and after a preemption put back on a new "
        "TPU, the script started again with TPUWIZARD_RESUME=1.",
    )(command)


def _resume_only_options(command: F) -> F:
    """``--budget``, ``--resume-from`` and ``--autocheckpoint``: launch's alone."""
    command = click.option(
        "--autocheckpoint/--no-autocheckpoint",
        "autocheckpoint",
        default=None,
        help="With --checkpoints on a TPU-API node of v2, v3, v4 or v5e: Google's Autocheckpoint "
        "(Preview), which sends your script SIGTERM before a maintenance event and waits up to "
        "5 minutes so it can save. On by default there; the node is created through the "
        "v2alpha1 API. Your script needs a SIGTERM handler that saves "
        "(docs/guides/spot-resume.md).",
    )(command)
    command = click.option(
        "--resume-from",
        "resume_from",
        metavar="RUN_ID",
        help="With --checkpoints: start from the latest complete checkpoint set of that earlier "
        "run (runs/RUN_ID/checkpoints), put back before the script's first start.",
    )(command)
    command = click.option(
        "--budget",
        "budget",
        type=Number(0, unit="US dollars", above=True),
        metavar="USD",
        help="With --checkpoints: every attempt's estimated cost together stays within it; each "
        "attempt's deadline is what is left of it, and none starts with under 10 minutes.",
    )(command)
    return command


def asked_resume(
    checkpoints: str | None,
    checkpoint_every: str,
    max_restarts: int | None,
    budget: float | None,
    resume_from: str | None,
    autocheckpoint: bool | None,
) -> Resume:
    """launch's part as asked, the copy interval read here (exit 2 for one it cannot read);
    resume_rules.py checks the rest."""
    from tpuwizard.core.launch.plan.parts import Resume

    return Resume(
        checkpoints,
        checkpoint_every_seconds(checkpoint_every),
        max_restarts_or_default(max_restarts),
        budget,
        resume_from,
        autocheckpoint,
    )


# launch's: the part as ``resume``, in the order --help has always listed them.
resume_options = option_group("resume", [checkpoint_options, _resume_only_options], asked_resume)


def max_restarts_or_default(asked: int | None) -> int:
    from tpuwizard.core.launch.plan.parts import DEFAULT_MAX_RESTARTS

    return DEFAULT_MAX_RESTARTS if asked is None else asked


def checkpoint_every_seconds(text: str) -> float:
    """The copy interval in seconds; exit 2 with what to type for a duration it cannot read."""
    from tpuwizard.core.launch.plan.resume_rules import parse_duration

    return parse_duration(text)


def run_checkpoints(
    folder: str | None, every: str, max_restarts: int | None
) -> CheckpointsAsked | None:
    """``run``'s --checkpoints, read and checked by launch's rules before the node is touched
    (exit 2 with what to type); None when not asked for."""
    from tpuwizard.core.errors import BadInput, PlanRefused
    from tpuwizard.session.kept.resume import CheckpointsAsked, checkpoints_asked_problems

    if folder is None:
        if max_restarts is not None:
            raise BadInput("--max-restarts is for a run that resumes: add --checkpoints DIR.")
        return None
    asked = CheckpointsAsked(
        folder, checkpoint_every_seconds(every), max_restarts_or_default(max_restarts)
    )
    problems = checkpoints_asked_problems(asked)
    if problems:
        raise PlanRefused(problems)  # worded as the CLI says them
    return asked
