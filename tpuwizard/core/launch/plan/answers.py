"""LaunchAnswers: what a person asked for one launch, and nothing found.

Each front end builds one from its own input (the CLI's options, the wizard's state, plain mode's
questions), with the words already parsed into enums and the accelerator's name into its
``Slice``, once, at that edge. What the pipeline finds on the way (the
backend ``auto`` becomes, the watchdog check's answer, OS Login) is not here: the session's
pipeline before create finds it (``Session.prepare``, which makes a ``CheckedPlan``), so a
misspelt answer is mypy's to catch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Guards, Reach, Where
from tpuwizard.core.launch.plan.resume_rules import DEFAULT_CHECKPOINT_EVERY_S, DEFAULT_MAX_RESTARTS


@dataclass(frozen=True)
class LaunchAnswers:
    """One launch as asked. ``where.backend`` may be ``AUTO``; ``where.project`` "" is the
    session's; ``watchdog`` None leaves it to the route's default."""

    where: Where  # the slice parsed once, where the front end read the name
    script: Path | None = None
    script_args: tuple[str, ...] = ()
    fetch: tuple[str, ...] = ()
    keep: bool = False
    max_run_minutes: float | None = None
    watchdog: bool | None = None
    precision: bool = False
    trace: bool = False
    reach: Reach = field(default_factory=Reach)
    idle_minutes: float | None = None
    queue_wait_minutes: float | None = None
    packages: tuple[PackageSpec, ...] = ()
    checkpoints: str | None = None
    checkpoint_every_s: float = DEFAULT_CHECKPOINT_EVERY_S
    max_restarts: int = DEFAULT_MAX_RESTARTS
    budget_usd: float | None = None
    resume_from: str | None = None
    jax: str | None = None
    # Autocheckpoint (issue 47): None leaves it to the plan's default (on with --checkpoints
    # where Google offers it).
    autocheckpoint: bool | None = None
    # The stall guard and the join's timeouts (issue 47): each None leaves its default.
    guards: Guards = field(default_factory=Guards)
    # Asked of the launch, not of the node (no field of its plan): the wait for READY (None: the
    # route's), and whether the node is kept for runs (``up``: its idle deadline defaults to
    # 30 minutes where a watchdog keeps it, and a watchdog that cannot be armed is a question).
    ready_timeout_s: float | None = None
    iterate: bool = False
