"""One pass of the user's script on the workers, written once for a launch and for a kept node's
``run``: copy what changed of its folder, run it on every worker (the resume point put back and
its checkpoints copied home around it), then fetch the files asked for.

What surrounds a pass differs and stays with the caller: a kept node installs new packages
between the copy and the run, and on a stop ends the script's job and keeps the node; a launch
lets the stop through, so the node is deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.resume.checkpoint_copier import ResumeSetup, resumed_run
from tpuwizard.core.launch.workers.distributed import JoinTimeouts
from tpuwizard.core.launch.workers.jobs import ScriptJob, fetch_files, run_script_job
from tpuwizard.core.launch.workers.missing_module import SeesLines
from tpuwizard.core.remote.jobs import Job, fan_out
from tpuwizard.core.remote.sync import (
    WORK_DIR,
    WORK_PYTHON,
    LocalFolder,
    SyncResult,
    sync_folder,
)
from tpuwizard.core.remote.transports import Transport


def folder_synced(synced: Sequence[SyncResult]) -> ev.FolderSynced:
    """What was copied to the workers, and how (rsync, or tar and why not rsync)."""
    first = synced[0]
    ways = sorted({s.method if s.method == "rsync" else f"tar: {s.why_not_rsync}" for s in synced})
    return ev.FolderSynced(
        list(first.changed),
        list(first.deleted),
        first.bytes_sent,
        len(synced),
        round(max(s.seconds for s in synced), 3),
        ways,
        first.files_bytes,
    )


def copy_folder(
    transport: Transport, folder: LocalFolder, emit: Callable[[ev.Event], None]
) -> None:
    """Copy what changed of the script's folder to every worker (a rerun sends only the edit),
    a large copy saying how far it is at each tenth."""
    synced = fan_out(
        transport,
        lambda w: sync_folder(transport, w, folder, progress=_tenths(emit, w, transport.workers)),
    )
    emit(folder_synced(synced))  # type: ignore[arg-type]


def _tenths(
    emit: Callable[[ev.Event], None], worker: int, workers: int
) -> Callable[[int, int], None]:
    """A copy's progress for ``worker``, said once at each tenth of it."""
    said = [0]  # the tenths said so far

    def progress(sent: int, total: int) -> None:
        tenth = sent * 10 // total
        if tenth > said[0]:
            said[0] = tenth
            emit(ev.FolderProgress(worker, sent, total, workers))

    return progress


@dataclass(frozen=True)
class ScriptPass:
    """What one run of the script on the workers is: its job, how it is called, where its lines
    and files go."""

    job: Job
    script: str  # a safe file name in the copied folder
    args: Sequence[str]
    coordinator: str | None  # where JAX cannot find the slice itself (the sandbox)
    env: dict[str, str]
    output: Path  # every line of every worker, as it arrives
    fetch: Sequence[str]
    fetched: Path  # where the fetched files go (the run's one layout)
    resume: ResumeSetup | None = None
    slice_address: str | None = None  # JAX_COORDINATOR_ADDRESS on a TPU API / Compute slice
    timeouts: JoinTimeouts = field(default_factory=JoinTimeouts)  # the launcher gives initialize()
    stall_s: float | None = None  # the stall guard's timeout (workers/stall.py); None: none
    compile_cache: bool = False  # a kept node's run: JAX's cache kept on the node


@dataclass(frozen=True)
class PassResult:
    code: int  # the script's exit code (the first non-zero one, else 0)
    incomplete: bool  # a file asked for did not come back whole
    sigterm: tuple[int, ...] = ()  # the workers whose job recorded a SIGTERM passed on to it


def run_then_fetch(
    transport: Transport,
    step: ScriptPass,
    watch: SeesLines,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken,
    on_start: Callable[[int, Job], None] | None = None,
    fetch_after_a_stop: bool = False,
) -> PassResult:
    """Run the script on every worker, streamed, then fetch its files. A stop during the run
    raises :class:`~tpuwizard.core.cancel.Cancelled`; ``fetch_after_a_stop`` lets a stop that
    comes once the script has ended leave the fetch alone (a kept node's files still come home;
    a launch's stop goes straight to the delete)."""
    with resumed_run(transport, step.resume, emit) as resume_env:
        job = ScriptJob(
            step.job,
            WORK_DIR,
            WORK_PYTHON,
            step.script,
            step.args,
            step.coordinator,
            {**step.env, **resume_env},
            step.slice_address,
            step.timeouts,
            step.stall_s,
            step.compile_cache,
        )
        end = run_script_job(transport, job, emit, cancel, on_start, step.output, watch)
    if fetch_after_a_stop:
        transport.cancel = None
    incomplete = fetch_files(transport, WORK_DIR, WORK_PYTHON, step.fetch, step.fetched, emit)
    return PassResult(end.code, incomplete, end.sigterm)
