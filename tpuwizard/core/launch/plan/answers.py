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

from tpuwizard.core.cloud.backends import Backend, Via
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Workload
from tpuwizard.core.launch.plan.resume_rules import DEFAULT_CHECKPOINT_EVERY_S, DEFAULT_MAX_RESTARTS
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.routes import Route


@dataclass(frozen=True)
class LaunchAnswers:
    """One launch as asked. ``backend`` may be ``AUTO``; ``project`` "" is the session's;
    ``watchdog`` None leaves it to the route's default."""

    accelerator: Slice  # parsed once, where the front end read the name
    zone: str = ""
    project: str = ""
    route: Route = Route.VM
    backend: Backend = Backend.AUTO
    name: str | None = None
    workload: Workload = field(default_factory=Workload)
    # When and how the node ends, as asked (parts.py).
    deadline: Deadline = field(default_factory=Deadline)
    failover: bool = False
    reach: Reach = field(default_factory=Reach)
    zones: tuple[str, ...] = ()
    fan_out: bool = False
    checkpoints: str | None = None
    checkpoint_every_s: float = DEFAULT_CHECKPOINT_EVERY_S
    max_restarts: int = DEFAULT_MAX_RESTARTS
    budget_usd: float | None = None
    resume_from: str | None = None
    via: Via = Via.AUTO
    # Autocheckpoint (issue 47): None leaves it to the plan's default (on with --checkpoints
    # where Google offers it).
    autocheckpoint: bool | None = None
    # The stall guard and the join's timeouts (issue 47): each None leaves its default.
    guards: Guards = field(default_factory=Guards)
