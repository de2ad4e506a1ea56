"""What each step is dismissed with, which the App folds into the wizard's state (tui/state.py).

Apart from the state, which the App makes before the first frame: only the steps after the first
need these (issue 38: the first frame imports nothing it does not draw).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
    """The Review step's answers: the launch's name, deadline, script and switches."""

    name: str | None
    max_run_minutes: float | None  # -1 when what was typed is not a number (a plan problem)
    watchdog: bool
    deep_checks: bool
    script: Path | None
    fetch: tuple[str, ...]
    backend: str = "auto"  # auto, tpu-api or compute (Review's switch where both serve it)
    packages: str = ""  # the Packages field: requirements separated by spaces
    checkpoints: str = ""  # Resume after preemption: the checkpoints folder; empty: off
    jax: str | None = None  # the worker's jax[tpu] from tpuwizard's table; None: its default
    # F4's dialog (GuardsAnswer): the stall guard's minutes (None: its default; 0: off), and
    # Autocheckpoint wanted where the node can have it.
    stall_minutes: float | None = None
    autocheckpoint: bool = True


@dataclass(frozen=True)
class GuardsAnswer:
    """Review's F4 dialog: the stall guard's minutes (None: its default; 0: off) and whether
    Autocheckpoint is wanted where the node can have it."""

    stall_minutes: float | None = None
    autocheckpoint: bool = True
