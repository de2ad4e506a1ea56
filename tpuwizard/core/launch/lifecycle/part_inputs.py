"""What each part of a launch is handed, made here and only here from the plan and the runtime.

A :class:`~tpuwizard.core.launch.plan.launch_plan.LaunchPlan` and a
:class:`~tpuwizard.core.launch.lifecycle.runtime.Runtime` are wide: every setting of a launch,
and everything it needs from the world. Each part receives a small frozen input holding what it
reads of them (:class:`EndingInput`, :class:`ProvisionInput`, :class:`WorkerInput`), beside the
:class:`~tpuwizard.core.launch.lifecycle.launch_state.LaunchContext` every part shares. Where a
part needs an answer of the plan's rules (which zones, whether to fail over, how long to wait),
the rule is asked here, once, and the part holds the answer.
"""

from __future__ import annotations

from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.launch.kept.settings import kept_settings
from tpuwizard.core.launch.lifecycle.ending import EndingInput
from tpuwizard.core.launch.lifecycle.fan_out import FanOutInput
from tpuwizard.core.launch.lifecycle.on_workers import WorkerInput
from tpuwizard.core.launch.lifecycle.provision import ProvisionInput
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.backend_rules import queue_wait_seconds
from tpuwizard.core.launch.plan.launch_plan import LaunchPlan
from tpuwizard.core.launch.plan.zone_rules import fails_over, probes, worst_case_hourly, zones_of
from tpuwizard.core.launch.workers.distributed import JoinTimeouts
from tpuwizard.core.launch.workers.stall import stall_seconds


def diagnosis_names(plan: LaunchPlan) -> Context:
    """What a diagnosis of this launch names (its zone is the state's: LaunchState.context)."""
    return Context(
        project=plan.project,
        accelerator=plan.accelerator,
        name=plan.node_name,
        route=plan.route,
        backend=plan.backend,
        slice=plan.slice,
    )


def ending_input(plan: LaunchPlan, rt: Runtime) -> EndingInput:
    return EndingInput(
        run_dir=plan.run_dir,
        slice=plan.slice,
        route=plan.route,
        accelerator=plan.accelerator,
        keep=plan.keep,
        watchdog=plan.watchdog,
        idle_minutes=plan.deadline.idle_minutes,
        max_run_s=plan.max_run_s,
        google_ends_it=plan.deadline_keeper.googles is not None,
        # The whole plan's settings, on purpose: a kept node's record holds what `up` asked
        # for, so that run --checkpoints can make the same node again from the record alone.
        kept_settings=kept_settings(plan),
        cloud=rt.cloud,
        ledger=rt.ledger,
        poll=rt.poll,
        owner=rt.owner,
        practice=rt.practice,
        login_key=rt.login_key,
        forget_login_key=rt.forget_login_key,
    )


def fan_out_input(plan: LaunchPlan, rt: Runtime) -> FanOutInput | None:
    """--fan-out's requests; None for a launch that creates in one zone at a time."""
    if not plan.where.fan_out:
        return None
    return FanOutInput(
        node_name=plan.node_name,
        zones=zones_of(plan.where),
        worst_case_hourly=worst_case_hourly(plan.where),
        quota_checked=rt.fan_out_quota_checked,
        practice=rt.practice,
    )


def provision_input(plan: LaunchPlan, rt: Runtime) -> ProvisionInput:
    return ProvisionInput(
        project=plan.project,
        run_id=plan.run_id,
        accelerator=plan.accelerator,
        slice=plan.slice,
        route=plan.route,
        node_name=plan.node_name,
        via=plan.where.via,
        about=diagnosis_names(plan),
        watchdog=plan.watchdog,
        service_account=plan.reach.service_account,
        internal_ips=plan.reach.internal_ips,
        autocheckpoint=plan.autocheckpoint_on,
        max_run_s=plan.max_run_s,
        # A probe (Flex-start failing over on Compute Engine) asks with a zero wait.
        capacity_wait_s=(
            0.0
            if probes(plan.where)
            else queue_wait_seconds(plan.where, plan.deadline.queue_wait_minutes)
        ),
        zones=plan.where.zones,
        fails_over=fails_over(plan.where),
        fan_out=fan_out_input(plan, rt),
        cloud=rt.cloud,
        ledger=rt.ledger,
        ssh_metadata=rt.ssh_metadata,
        owner=rt.owner,
        login=rt.login,
        ready_timeout=rt.ready_timeout,
        poll=rt.poll,
        practice=rt.practice,
    )


def worker_input(plan: LaunchPlan, rt: Runtime) -> WorkerInput:
    return WorkerInput(
        run_id=plan.run_id,
        run_dir=plan.run_dir,
        slice=plan.slice,
        bootstrap=rt.bootstrap,
        workload=plan.workload,
        worker_jax=rt.worker_jax,
        expect=rt.expect,
        explicit_coordinator=rt.explicit_coordinator,
        join_timeout=rt.join_timeout,
        stall_s=stall_seconds(plan.guards.stall_minutes),
        join_timeouts=JoinTimeouts.of(plan.guards.join_timeout_s, plan.guards.heartbeat_timeout_s),
        chip_files=rt.chip_files,
    )
