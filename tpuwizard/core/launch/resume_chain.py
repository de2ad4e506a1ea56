"""A spot run that survives preemption (``launch --checkpoints DIR``): attempts in a chain.

Each attempt is the launch's own (provision, bootstrap, verify, the script, its checkpoints
copied home as it runs). When the node goes away under it (Google preempts a spot TPU, or it is
simply gone) the old node is deleted and verified gone, its queued resource included, and a new
one is made in the same zone (then ``--zones``), the latest complete checkpoint set put back and
the script started again with ``TPUWIZARD_RESUME=1``, up to ``--max-restarts`` times, while
``--max-run`` (from the chain's start) leaves an attempt at least ten minutes. Every attempt is
an entry of ``chain.json`` (core/evidence/chain.py), its receipt kept in ``attempts/<n>/``.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.diagnose import diagnose
from tpuwizard.core.cloud.diagnosis import Diagnosis
from tpuwizard.core.errors import NodeGone
from tpuwizard.core.evidence.chain import (
    ChainEntry,
    append_entry,
    earlier_run_link,
    file_sha256,
    record_stop,
)
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK, EXIT_TEARDOWN
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.checkpoint_copier import ResumeSetup
from tpuwizard.core.launch.plan_resume import (
    CHECKPOINTS_FOLDER,
    MIN_ATTEMPT_MINUTES,
    budget_minutes,
    earlier_run_folder,
)
from tpuwizard.core.remote.checkpoints import CheckpointsHome

if TYPE_CHECKING:
    from tpuwizard.core.launch.lifecycle import Launch
# What ended the chain, in the words of the summary's "Failed during script" line.
STOPPED_BY = {
    "budget": "--budget would be passed",
    "max_restarts": "--max-restarts used up",
    "max_run": "--max-run nearly over",
}


class ResumeChain:
    """Runs the launch's attempts until one ends other than by its node going away."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        plan = launch.plan
        assert plan.checkpoints is not None
        self.home = CheckpointsHome(plan.run_dir / CHECKPOINTS_FOLDER)
        self.setup = ResumeSetup(plan.checkpoints, self.home, plan.checkpoint_every_s)
        self.chain_end = 0.0  # --max-run's end, from the chain's start

    def run(self) -> int:
        launch, plan, state = self.launch, self.launch.plan, self.launch.state
        self.chain_end = time.time() + plan.max_run * 60
        launch.workers.resume = self.setup
        attempts_at_most = plan.max_restarts + 1
        if plan.resume_from is not None:  # checked by the plan: it has a complete set
            earlier = CheckpointsHome(earlier_run_folder(plan) / CHECKPOINTS_FOLDER)
            chosen = earlier.latest()
            assert chosen is not None
            self.setup.resume_from = self.home.take_from(earlier, chosen)
        self._bound_attempt()
        while True:
            started = time.time()
            code = launch.attempt(quiet_gone=True)
            gone = launch.gone
            node = state.resource.node_id or state.resource.name if state.resource else ""
            self._record(started, code, gone, node or plan.node_name)
            if gone is None:
                return code
            name = plan.node_name
            launch.emit(ev.Preempted(name, state.zone, self.setup.attempt, _state_of(gone)))
            if not launch.ending.teardown():  # verified gone, queued resource included
                return EXIT_TEARDOWN
            # Until verified gone; counted in earlier_cost only once the next attempt starts
            # (until then the launch's own state prices it, in the summary too).
            this_cost = launch.ending.cost_so_far() or 0.0
            stop = self._why_no_restart(attempts_at_most, launch.ending.earlier_cost + this_cost)
            if stop is not None:
                by, why_not = stop
                record_stop(plan.run_dir, by, why_not)
                d = diagnose(gone, state.context(plan))
                title = f"{d.title}; no new attempt: {STOPPED_BY[by]}"  # the summary's line
                launch.emit(ev.Failed("script", Diagnosis(d.kind, title, why_not, d.next_steps)))
                return EXIT_CLOUD
            launch.ending.earlier_cost += this_cost
            self.setup.attempt += 1
            self.setup.resume_from = self.home.latest()
            chosen = self.setup.resume_from
            launch.emit(
                ev.Recreating(
                    self.setup.attempt,
                    attempts_at_most,
                    state.zone,
                    chosen.name if chosen is not None else None,
                )
            )
            self._fresh_attempt()

    def _attempt_minutes(self, spent: float) -> tuple[float, str]:
        """How long the next attempt may run, and what bounds it: the chain's --max-run, or
        what is left of --budget after ``spent`` (less the delete allowance) at the plan's
        price."""
        plan = self.launch.plan
        left = (self.chain_end - time.time()) / 60
        if plan.budget_usd is None:
            return left, "max_run"
        bought = budget_minutes(
            plan.accelerator, plan.route, self.launch.state.zone, plan.budget_usd - spent
        )
        if bought is not None and bought < left:
            return bought, "budget"
        return left, "max_run"

    def _why_no_restart(self, attempts_at_most: int, spent: float) -> tuple[str, str] | None:
        """What stops a new attempt (restarts used up, too little time or budget left after
        ``spent``) and why, in words; None: it starts."""
        if self.setup.attempt >= attempts_at_most:
            return "max_restarts", (
                f"It was preempted {self.setup.attempt} time(s), and --max-restarts allows "
                f"{attempts_at_most - 1}. Its checkpoints are in {self.home.folder}."
            )
        minutes, by = self._attempt_minutes(spent)
        if minutes >= MIN_ATTEMPT_MINUTES:
            return None
        if by == "budget":
            budget = self.launch.plan.budget_usd or 0.0
            return "budget", (
                f"--budget ${budget:.2f}: the attempts so far cost about ${spent:.2f} "
                f"(estimate), and what is left buys {max(0.0, minutes):.0f} minute(s), less "
                f"than the {MIN_ATTEMPT_MINUTES:g} an attempt needs, so no new TPU was made. "
                f"Its checkpoints are in {self.home.folder}: resume with --resume-from "
                f"{self.launch.plan.run_id}."
            )
        return "max_run", (
            f"Only {max(0.0, minutes):.0f} minute(s) of --max-run are left, less than the "
            f"{MIN_ATTEMPT_MINUTES:g} an attempt needs. Its checkpoints are in "
            f"{self.home.folder}."
        )

    def _bound_attempt(self) -> None:
        """The next attempt's deadline: the time left of the chain's, or of the budget's."""
        launch = self.launch
        minutes, _ = self._attempt_minutes(launch.ending.earlier_cost)
        launch.chain_deadline = time.time() + minutes * 60
        launch.provisioner.plan = replace(launch.plan, max_run_minutes=minutes)

    def _fresh_attempt(self) -> None:
        """The launch's state as before a first create, and the new node's deadline the time
        left of the chain's (or of the budget's)."""
        state = self.launch.state
        state.node = state.transport = None
        state.created_at = state.costing_since = state.gone_at = None
        state.watchdog_deadline = state.receipt = None
        state.running_jobs.clear()
        self._bound_attempt()

    def _record(self, started: float, code: int, gone: Exception | None, node: str) -> None:
        """The attempt's entry in chain.json, its receipt kept beside it."""
        launch, plan = self.launch, self.launch.plan
        receipt = launch.state.receipt
        kept: str | None = None
        sha: str | None = None
        if receipt is not None:
            folder = plan.run_dir / "attempts" / str(self.setup.attempt)
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / "receipt.json"
            shutil.copyfile(receipt, target)
            kept, sha = str(target.relative_to(plan.run_dir)), file_sha256(target)
        if gone is not None:
            ended = "preempted" if _state_of(gone) == "PREEMPTED" else "gone"
        elif launch.cancel.is_set():
            ended = "stopped"
        else:
            ended = "finished" if code == EXIT_OK else "failed"
        chosen = self.setup.resume_from
        earlier = None
        if self.setup.attempt == 1 and plan.resume_from is not None:  # the link to its chain
            earlier = earlier_run_link(earlier_run_folder(plan), plan.resume_from)
        append_entry(
            plan.run_dir,
            plan.run_id,
            ChainEntry(
                self.setup.attempt,
                launch.state.zone,
                node,
                round(started, 3),
                round(time.time(), 3),
                ended,
                chosen.name if chosen is not None else None,
                launch.workers.script_exit_code,
                kept,
                sha,
                earlier_run=earlier,
            ),
        )


def _state_of(gone: Exception) -> str | None:
    return gone.state if isinstance(gone, NodeGone) else None
