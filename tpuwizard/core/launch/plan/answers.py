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

from tpuwizard.core.launch.plan.parts import Deadline, Guards, Reach, Resume, Where, Workload


@dataclass(frozen=True)
class LaunchAnswers:
    """One launch as asked. ``where.backend`` may be ``AUTO``; ``where.project`` "" is the
    session's; ``deadline.watchdog`` None leaves it to the route's default."""

    where: Where  # the slice parsed once, where the front end read the name
    workload: Workload = field(default_factory=Workload)
    # When and how the node ends, as asked (parts.py).
    deadline: Deadline = field(default_factory=Deadline)
    reach: Reach = field(default_factory=Reach)
    # How the run comes back after a preemption, Autocheckpoint with it (parts.py).
    resume: Resume = field(default_factory=Resume)
    # The stall guard and the join's timeouts (issue 47): each None leaves its default.
    guards: Guards = field(default_factory=Guards)
