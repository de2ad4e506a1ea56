"""A launch's attempts in a chain that resumes after preemption (``launch --checkpoints``):
each the launch's own (provision, bootstrap, verify, the script), its node's deadline the time
left of the chain's (or of ``--budget``'s), its cost counted once it is verified gone."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from tpuwizard.core.cloud.diagnose import diagnose
from tpuwizard.core.cloud.diagnosis import Diagnosis
from tpuwizard.core.launch.plan.resume_rules import earlier_run_folder
from tpuwizard.core.launch.resume.chain import AttemptEnd, ChainLimits, ResumeChain

if TYPE_CHECKING:
    from tpuwizard.core.launch.lifecycle.launch import Launch


class LaunchAttempts:
    """:class:`~tpuwizard.core.launch.resume.chain.ChainAttempts` of one launch."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.emit = launch.emit

    @property
    def zone(self) -> str:
        return self.launch.state.zone

    def bound(self, minutes: float) -> None:
        launch = self.launch
        launch.chain_deadline = time.time() + minutes * 60
        launch.provisioner.plan = replace(launch.plan, max_run_minutes=minutes)

    def attempt(self) -> AttemptEnd:
        launch, state = self.launch, self.launch.state
        code = launch.attempt(quiet_gone=True)
        r = state.resource
        return AttemptEnd(
            code,
            launch.gone,
            state.zone,
            (r.node_id or r.name) if r else launch.plan.node_name,
            state.receipt,
            launch.workers.script_exit_code,
            launch.cancel.is_set(),
        )

    def end_gone(self) -> bool:
        return self.launch.ending.teardown()

    def spent(self) -> float:
        ending = self.launch.ending
        return ending.earlier_cost + (ending.cost_so_far() or 0.0)

    def next_attempt(self) -> None:
        """The gone node's cost into the earlier attempts', and the launch's state as before a
        first create."""
        ending, state = self.launch.ending, self.launch.state
        ending.earlier_cost += ending.cost_so_far() or 0.0
        state.node = state.transport = None
        state.created_at = state.costing_since = state.gone_at = None
        state.watchdog_deadline = state.receipt = None
        state.running_jobs.clear()

    def gone_diagnosis(self, gone: Exception) -> Diagnosis:
        return diagnose(gone, self.launch.state.context(self.launch.plan))


def launch_chain(launch: Launch) -> ResumeChain:
    """The chain of ``launch``'s attempts; ``--max-run`` counts from now."""
    plan = launch.plan
    assert plan.checkpoints is not None
    setup = ResumeChain.setup_for(plan.checkpoints, plan.run_dir, plan.checkpoint_every_s)
    launch.workers.resume = setup
    limits = ChainLimits(
        plan.run_dir,
        plan.run_id,
        plan.max_restarts,
        time.time() + plan.max_run * 60,
        plan.accelerator,
        plan.route,
        plan.budget_usd,
        plan.resume_from,
        earlier_run_folder(plan) if plan.resume_from is not None else None,
    )
    return ResumeChain(LaunchAttempts(launch), limits, setup)
