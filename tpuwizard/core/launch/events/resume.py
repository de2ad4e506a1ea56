"""The events of a spot run that survives preemption (``launch --checkpoints``): checkpoints
come home, the node goes, a new one comes, the script resumes. Re-exported by events.py, the
one vocabulary every front end reads."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.launch.events.base import Event


@dataclass(frozen=True)
class CheckpointCopied(Event):
    """--checkpoints: a complete set came home whole (each file size- and sha256-checked)."""

    name: str
    step: int | None
    files: int
    size_bytes: int
    path: str
    # Loose files with no COMMITTED marker, taken because they held still from one copy pass to
    # the next: assumed complete, not known to be.
    assumed: bool = False


@dataclass(frozen=True)
class CheckpointsUnusable(Event):
    """--checkpoints: the folder holds files, yet none of them can come home as a complete set
    (said once, on the first pass that finds it so, long before a preemption), or its files
    without a marker change between every pass (said once, after RESTLESS_PASSES passes)."""

    folder: str  # as the script sees it (--checkpoints)
    files: int
    # 0: no layout fits them. N: files with no marker that changed between each of the last N
    # passes, so they never held still long enough to be taken.
    restless_passes: int = 0
    every_s: float = 0.0  # how often the passes come


@dataclass(frozen=True)
class Preempted(Event):
    """--checkpoints: the node went away under the script (preempted, or gone)."""

    name: str
    zone: str
    attempt: int
    state: str | None  # PREEMPTED, or None when it is simply gone


@dataclass(frozen=True)
class Recreating(Event):
    """--checkpoints: the old node is verified gone; a new one is being made."""

    attempt: int  # the attempt about to start (2 is the first restart)
    attempts_at_most: int
    zone: str
    resume_from: str | None  # the complete set it will resume from; None: from the start


@dataclass(frozen=True)
class Resumed(Event):
    """--checkpoints: the set is on the new node; the script starts with TPUWIZARD_RESUME=1."""

    attempt: int
    checkpoint: str | None
    step: int | None


@dataclass(frozen=True)
class KeptReplaced(Event):
    """run --checkpoints: the kept node went away and a new one, made from ``up``'s settings,
    is kept in its place; later commands use ``new_name``."""

    old_name: str
    new_name: str
    zone: str
    run_id: str  # the run that made the new node (its receipt is in its folder)
