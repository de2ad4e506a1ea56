"""A spot run that survives preemption (``--checkpoints DIR``): attempts in a chain.

Each attempt runs the script on a node, its checkpoints copied home as it runs. When the node
goes away under it (Google preempts a spot TPU, or it is simply gone) the old node is deleted
and verified gone, its queued resource included, and a new one is made in the same zone (then
the next zones of ``--zones``), the latest complete checkpoint set put back and the script
started again with ``TPUWIZARD_RESUME=1``, up to ``--max-restarts`` times, while the chain's end
(``--max-run`` from its start; a kept node's deadline) leaves an attempt at least ten minutes.
Every attempt is an entry of ``chain.json`` (core/evidence/chain.py), its receipt kept in
``attempts/<n>/``.

The chain is one loop over :class:`ChainAttempts`: a launch's (lifecycle/launch.py) or a kept
node's that ``run --checkpoints`` recreates from ``up``'s settings (session/kept/resume.py).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tpuwizard.core.cloud.diagnose.diagnosis import Diagnosis
from tpuwizard.core.errors import NodeGone
from tpuwizard.core.evidence.chain import (
    ChainEntry,
    append_entry,
    earlier_run_link,
    file_sha256,
    record_stop,
)
from tpuwizard.core.exit_codes import EXIT_BAD_INPUT, EXIT_CLOUD, EXIT_OK, EXIT_TEARDOWN
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.resume_rules import (
    CHECKPOINTS_FOLDER,
    MIN_ATTEMPT_MINUTES,
    budget_minutes,
)
from tpuwizard.core.launch.resume.checkpoint_copier import ResumeSetup
from tpuwizard.core.remote.checkpoints import CheckpointsHome

if TYPE_CHECKING:
    from tpuwizard.core.plan.catalog import Slice

# What ended the chain, in the words of the summary's "Failed during script" line.
STOPPED_BY = {
    "budget": "--budget would be passed",
    "unpriced": "--budget can no longer be checked",
    "max_restarts": "--max-restarts used up",
    "max_run": "--max-run nearly over",
}


@dataclass(frozen=True)
class AttemptEnd:
    """How one attempt ended, as its entry in chain.json says it."""

    code: int
    gone: Exception | None  # the node went away under it (preempted, or simply gone)
    zone: str
    node: str
    receipt: str | None  # the verifier's receipt of its node, when it made one
    script_exit: int | None
    stopped: bool  # a stop (a signal, Delete now) ended it
    # The workers whose script job recorded a SIGTERM passed on to the script (its wrapper's
    # mark: Autocheckpoint's warning before maintenance, or practice's maintenance_sigterm).
    sigterm: tuple[int, ...] = ()


class NextStep(Enum):
    """What follows an attempt."""

    ENDS = "ends"  # its end is the run's: finished, failed or stopped
    SAME_NODE = "same node"  # its script got a SIGTERM and the node is READY: run it again there
    NEW_NODE = "new node"  # its node went away: deleted, verified gone, and a new one made


def next_step(end: AttemptEnd) -> NextStep:
    """The chain's rule: a script that got a SIGTERM tpuwizard saw never ends the run, whatever
    its exit code (a handler that saved and exited 0 did not finish); it runs again from its
    last checkpoint, on its node while that is READY, on a new one once it is gone. A stop
    ends it first (a stop's own SIGTERM reaches the script through its job too)."""
    if end.stopped:
        return NextStep.ENDS
    if end.gone is not None:
        return NextStep.NEW_NODE
    if end.sigterm:
        return NextStep.SAME_NODE
    return NextStep.ENDS


@dataclass(frozen=True)
class ChainLimits:
    """What bounds a chain, and where it is written."""

    run_dir: Path
    run_id: str
    max_restarts: int
    ends_at: float  # no attempt starts with under ten minutes before this (--max-run's end)
    slice: Slice
    route: str
    budget_usd: float | None = None
    resume_from: str | None = None  # --resume-from: the earlier run's id ...
    earlier_folder: Path | None = None  # ... and its folder


class ChainAttempts(Protocol):
    """The attempts of one kind of chain."""

    emit: Callable[[ev.Event], None]

    @property
    def zone(self) -> str:
        """Where the next attempt's node is made first (the last one's zone)."""
        ...

    def bound(self, minutes: float) -> None:
        """The next attempt's node may run this long (its deadline)."""

    def attempt(self) -> AttemptEnd:
        """Run the script on a node (made first, from the second attempt on); never raises."""
        ...

    def end_gone(self) -> bool:
        """Delete the node that went away (its queued resource too); True: verified gone."""
        ...

    def spent(self) -> float:
        """The estimated cost of every attempt so far, the last one's included."""
        ...

    def next_attempt(self) -> None:
        """The last attempt is over and counted: start the next from nothing made."""

    def run_again(self) -> None:
        """The next attempt runs the script again on the last one's node (still READY)."""

    def gone_diagnosis(self, gone: Exception) -> Diagnosis:
        """What the node going away means, as the Failed event says it."""
        ...


class ResumeChain:
    """Runs the attempts until one ends other than by its node going away."""

    def __init__(self, attempts: ChainAttempts, limits: ChainLimits, setup: ResumeSetup) -> None:
        self.attempts, self.limits, self.setup = attempts, limits, setup
        self.home = setup.home

    @classmethod
    def setup_for(cls, folder: str, run_dir: Path, every_s: float) -> ResumeSetup:
        """The resume setup of a chain whose sets come home to ``run_dir/checkpoints``."""
        return ResumeSetup(folder, CheckpointsHome(run_dir / CHECKPOINTS_FOLDER), every_s)

    def run(self) -> int:
        attempts, limits = self.attempts, self.limits
        attempts_at_most = limits.max_restarts + 1
        if limits.earlier_folder is not None:  # checked by the plan: it has a complete set
            earlier = CheckpointsHome(limits.earlier_folder / CHECKPOINTS_FOLDER)
            chosen = earlier.latest()
            assert chosen is not None
            self.setup.resume_from = self.home.take_from(earlier, chosen)
        minutes, by = self._attempt_minutes(attempts.spent())
        if by == "unpriced":  # the plan's check passed on a price since lost: nothing is made
            attempts.emit(
                ev.Failed(
                    "plan",
                    Diagnosis(
                        "bad_input",
                        "The plan is not valid",
                        "It breaks the rule below; nothing was created.",
                        [self._unpriced_words()],
                    ),
                )
            )
            return EXIT_BAD_INPUT
        attempts.bound(minutes)
        while True:
            started = time.time()
            end = attempts.attempt()
            step = next_step(end)
            self._record(started, end, step)
            if step is NextStep.ENDS:
                return end.code
            if end.gone is not None:
                state = _state_of(end.gone)
                attempts.emit(ev.Preempted(end.node, end.zone, self.setup.attempt, state))
                if not attempts.end_gone():  # verified gone, queued resource included
                    return EXIT_TEARDOWN
            # Until verified gone; counted once, whether or not a next attempt starts.
            spent = attempts.spent()
            stop = self._why_no_restart(attempts_at_most, spent, end)
            if stop is not None:
                by, why_not = stop
                record_stop(limits.run_dir, by, why_not)
                d = self._ended_diagnosis(end)
                title = f"{d.title}; no new attempt: {STOPPED_BY[by]}"  # the summary's line
                attempts.emit(ev.Failed("script", Diagnosis(d.kind, title, why_not, d.next_steps)))
                return EXIT_CLOUD
            self.setup.attempt += 1
            self.setup.resume_from = self.home.latest()
            chosen = self.setup.resume_from
            chosen_name = chosen.name if chosen is not None else None
            if step is NextStep.SAME_NODE:
                attempts.emit(
                    ev.RunningAgain(
                        end.node,
                        end.zone,
                        self.setup.attempt,
                        attempts_at_most,
                        chosen_name,
                        end.sigterm,
                    )
                )
                attempts.run_again()  # its deadline stands: the node and its watchdog do
                continue
            attempts.emit(
                ev.Recreating(self.setup.attempt, attempts_at_most, attempts.zone, chosen_name)
            )
            attempts.next_attempt()
            attempts.bound(self._attempt_minutes(spent)[0])

    def _ended_diagnosis(self, end: AttemptEnd) -> Diagnosis:
        """Why the last attempt did not finish: its node went away, or its script got SIGTERM."""
        if end.gone is not None:
            return self.attempts.gone_diagnosis(end.gone)
        workers = ", ".join(str(w) for w in end.sigterm)
        return Diagnosis(
            "sigterm",
            f"Your script got SIGTERM on worker {workers} before it finished",
            "",
            [
                f"A new launch with --checkpoints and --resume-from {self.limits.run_id} starts "
                "from its last checkpoint that came home."
            ],
        )

    def _attempt_minutes(self, spent: float) -> tuple[float, str]:
        """How long the next attempt may run, and what bounds it: the chain's end, or what is
        left of --budget after ``spent`` (less the delete allowance) at the plan's price."""
        limits = self.limits
        left = (limits.ends_at - time.time()) / 60
        if limits.budget_usd is None:
            return left, "max_run"
        bought = budget_minutes(
            limits.slice, limits.route, self.attempts.zone, limits.budget_usd - spent
        )
        if bought is None:  # no usable price now: no attempt starts on the budget's word
            return 0.0, "unpriced"
        if bought < left:
            return bought, "budget"
        return left, "max_run"

    def _unpriced_words(self) -> str:
        limits = self.limits
        return (
            f"--budget cannot be checked: no usable price is known now for {limits.slice.name} "
            f"on the {limits.route} route in {self.attempts.zone}, so no new TPU was made."
        )

    def _why_no_restart(
        self, attempts_at_most: int, spent: float, end: AttemptEnd
    ) -> tuple[str, str] | None:
        """What stops a new attempt (restarts used up, too little time or budget left after
        ``spent``) and why, in words; None: it starts."""
        if self.setup.attempt >= attempts_at_most:
            how = "its TPU was preempted or gone" if end.gone is not None else "SIGTERM"
            return "max_restarts", (
                f"It was interrupted {self.setup.attempt} time(s) (the last: {how}), and "
                f"--max-restarts allows {attempts_at_most - 1}. Its checkpoints are in "
                f"{self.home.folder}."
            )
        minutes, by = self._attempt_minutes(spent)
        if by == "unpriced":
            words = self._unpriced_words()
            return "unpriced", f"{words} Its checkpoints are in {self.home.folder}."
        if minutes >= MIN_ATTEMPT_MINUTES:
            return None
        if by == "budget":
            budget = self.limits.budget_usd or 0.0
            return "budget", (
                f"--budget ${budget:.2f}: the attempts so far cost about ${spent:.2f} "
                f"(estimate), and what is left buys {max(0.0, minutes):.0f} minute(s), less "
                f"than the {MIN_ATTEMPT_MINUTES:g} an attempt needs, so no new TPU was made. "
                f"Its checkpoints are in {self.home.folder}: resume with --resume-from "
                f"{self.limits.run_id}."
            )
        return "max_run", (
            f"Only {max(0.0, minutes):.0f} minute(s) of --max-run are left, less than the "
            f"{MIN_ATTEMPT_MINUTES:g} an attempt needs. Its checkpoints are in "
            f"{self.home.folder}."
        )

    def _record(self, started: float, end: AttemptEnd, step: NextStep) -> None:
        """The attempt's entry in chain.json, its receipt kept beside it."""
        limits = self.limits
        kept: str | None = None
        sha: str | None = None
        if end.receipt is not None:
            folder = limits.run_dir / "attempts" / str(self.setup.attempt)
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / "receipt.json"
            shutil.copyfile(end.receipt, target)
            kept, sha = str(target.relative_to(limits.run_dir)), file_sha256(target)
        if end.gone is not None:
            ended = "preempted" if _state_of(end.gone) == "PREEMPTED" else "gone"
        elif end.stopped:
            ended = "stopped"
        elif step is NextStep.SAME_NODE:
            ended = "sigterm"
        else:
            ended = "finished" if end.code == EXIT_OK else "failed"
        chosen = self.setup.resume_from
        earlier = None
        first = self.setup.attempt == 1
        if first and limits.resume_from is not None and limits.earlier_folder is not None:
            earlier = earlier_run_link(limits.earlier_folder, limits.resume_from)
        append_entry(
            limits.run_dir,
            limits.run_id,
            ChainEntry(
                self.setup.attempt,
                end.zone,
                end.node,
                round(started, 3),
                round(time.time(), 3),
                ended,
                chosen.name if chosen is not None else None,
                end.script_exit,
                kept,
                sha,
                earlier_run=earlier,
            ),
        )


def _state_of(gone: Exception) -> str | None:
    return gone.state if isinstance(gone, NodeGone) else None
