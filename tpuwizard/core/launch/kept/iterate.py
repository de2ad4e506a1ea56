"""Working with a kept node: copy what changed, run the script on every worker.

A node kept by ``tpuwizard up`` was bootstrapped and verified once; each run afterwards only
copies the changed files of the script's folder (:mod:`tpuwizard.core.remote.sync`) and starts
the script as a detached job in the venv on every worker. A stop (Ctrl+C) ends the script's jobs,
never the node. While a run goes on, heartbeats (:mod:`tpuwizard.core.launch.workers.heartbeat`)
keep the on-VM watchdog's idle deadline away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core import paths
from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.errors import BadInput
from tpuwizard.core.exit_codes import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.plan.packages import PackageSpec, package_problems
from tpuwizard.core.launch.plan.workload_rules import (
    safe_fetch_pattern,
    safe_script_name,
    script_problems,
)
from tpuwizard.core.launch.resume.checkpoint_copier import ResumeSetup
from tpuwizard.core.launch.workers.add_packages import install_packages
from tpuwizard.core.launch.workers.compile_cache import CacheCount, cache_env, count_entries
from tpuwizard.core.launch.workers.distributed import JoinTimeouts
from tpuwizard.core.launch.workers.jobs import (
    OUTPUT_FILE,
    script_env,
    stop_on_workers,
)
from tpuwizard.core.launch.workers.output_watch import ScriptOutputWatch
from tpuwizard.core.launch.workers.script_pass import ScriptPass, copy_folder, run_then_fetch
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.sync import (
    LocalFolder,
)
from tpuwizard.core.remote.transports import Transport

EXIT_STOPPED = EXIT_INTERRUPTED  # the user stopped the script (Ctrl+C); the node is kept


@dataclass(frozen=True)
class ScriptRun:
    """One run of the user's script on a kept node."""

    script: Path
    args: Sequence[str]
    run_id: str
    run_dir: Path
    slice: catalog.Slice
    expect: str  # "tpu", or "cpu" in the sandbox
    fetch: Sequence[str] = ()
    coordinator: str | None = None  # where JAX cannot find the slice itself (the sandbox)
    packages: tuple[PackageSpec, ...] = ()  # installed first where they are new
    # run --checkpoints: the chain's setup (copied home as it runs, put back on a new node).
    resume: ResumeSetup | None = None
    # JAX_COORDINATOR_ADDRESS on a TPU API / Compute Engine slice (workers/distributed.py),
    # the launcher's join timeouts, and the stall guard's timeout (None: no guard).
    slice_address: str | None = None
    timeouts: JoinTimeouts = field(default_factory=JoinTimeouts)
    stall_s: float | None = None

    def problems(self) -> list[str]:
        found = script_problems(self.script)
        found += [str(p) for p in package_problems(self.packages)]
        for pattern in self.fetch:
            try:
                safe_fetch_pattern(pattern)
            except BadInput as err:
                found.append(str(err))
        return found

    def env(self) -> dict[str, str]:
        """Every worker's environment (``jax.distributed``'s part is added per worker), with
        the compile cache's threshold (its folder is exported by the job: it needs ``$HOME``)."""
        return {**script_env(self.expect, self.slice, self.run_id), **cache_env()}


def run_script(
    transport: Transport,
    run: ScriptRun,
    folder: LocalFolder,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken,
) -> int:
    """Copy what changed, run the script on every worker, stream it, fetch its files; returns
    tpuwizard's exit code for the run: 0, 1 when the script failed or a file did not come back
    whole, or the stop's (128 + the signal; :data:`EXIT_STOPPED` when the stopper gave none).

    A set ``cancel`` stops the script's jobs on every worker, never the node.
    """
    transport.cancel = cancel
    try:
        copy_folder(transport, folder, emit)
    except Cancelled:
        return cancel.exit_code or EXIT_STOPPED
    try:
        job_name = f"packages-{run.run_id}"
        failed = (
            install_packages(transport, run.packages, job_name, emit, cancel)
            if run.packages
            else None
        )
        if failed is not None:
            emit(ev.Failed("packages", failed))
            return EXIT_FAILED
    except Cancelled:
        return cancel.exit_code or EXIT_STOPPED
    watch = ScriptOutputWatch(run.script)
    step = ScriptPass(
        Job(f"run-{run.run_id}"),
        safe_script_name(run.script.name),
        run.args,
        run.coordinator,
        run.env(),
        run.run_dir / OUTPUT_FILE,
        run.fetch,
        paths.fetched_files(run.run_dir),  # the one layout, as launch's
        run.resume,
        run.slice_address,
        run.timeouts,
        run.stall_s,
        compile_cache=True,
    )
    before = count_entries(transport)
    try:
        # The files are copied back even after a late Ctrl+C.
        done = run_then_fetch(transport, step, watch, emit, cancel, fetch_after_a_stop=True)
    except Cancelled:
        stop_on_workers(transport, step.job)  # the script, not the node
        return cancel.exit_code or EXIT_STOPPED
    after = count_entries(transport) if before is not None else None
    if before is not None and after is not None:
        emit(ev.CompileCache(before, after, CacheCount(before, after).hit))
    if done.code != 0 and watch.package:
        from tpuwizard.core.cloud.diagnose.remote import missing_package_diagnosis

        emit(ev.Failed("script", missing_package_diagnosis(watch.module or "", watch.package)))
    elif done.code != 0 and watch.tpu_error is not None:  # the TPU's own words say why
        from tpuwizard.core.cloud.diagnose.tpu_errors import tpu_error_diagnosis

        emit(ev.Failed("script", tpu_error_diagnosis(watch.tpu_error, run.slice, kept=True)))
    return EXIT_FAILED if done.code != 0 or done.incomplete else EXIT_OK
