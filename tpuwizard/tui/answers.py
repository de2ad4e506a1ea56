"""What each step is dismissed with, which the App folds into the wizard's state (tui/state.py).

Apart from the state, which the App makes before the first frame: only the steps after the first
need these (issue 38: the first frame imports nothing it does not draw).
"""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.launch.plan.parts import Deadline, Guards, Resume, Workload


@dataclass(frozen=True)
class ProgramPick:
    """A slice picked from "From my program"'s table, with what the program needs on it."""

    accelerator: str
    verdict: str  # the program's figures on that slice (words/program_table.py)
    fits: bool | None  # None: the table could not say


@dataclass(frozen=True)
class AccountAnswer:
    """The Account step's answer: practice or real, and the project typed."""

    practice: bool
    project: str | None  # None: none typed (practice mode needs none)


@dataclass(frozen=True)
class CapacityAnswer:
    """The Capacity step's answer: the state's size and the accelerator chosen for it."""

    state_gib: float
    accelerator: str
    params: str  # the parameter count typed, if any ("7B")
    recipe: str
    program: ProgramPick | None = None  # picked from the program's table: its figures, not the size


@dataclass(frozen=True)
class ReviewAnswer:
    """The Review step's answers, as the launch's parts (core/launch/plan/parts.py): the node's
    name and the API asked for (auto, or Review's switch where both serve it; the rest of
    ``Where`` is the other steps'), and the parts Review asks whole."""

    name: str | None
    backend: Backend
    deadline: Deadline  # its minutes -1 when what was typed is not a number (a plan problem)
    # The script, its files, the Packages field's requirements (a requirements.txt beside the
    # script is added with the plan), the worker's JAX, and the deeper checks (precision, trace).
    workload: Workload
    guards: Guards  # F4's dialog (GuardsAnswer)
    resume: Resume  # the checkpoints folder (None: off), and F4's Autocheckpoint


@dataclass(frozen=True)
class GuardsAnswer:
    """Review's F4 dialog: the stall guard's minutes (None: its default; 0: off) and whether
    Autocheckpoint is wanted where the node can have it."""

    stall_minutes: float | None = None
    autocheckpoint: bool = True
