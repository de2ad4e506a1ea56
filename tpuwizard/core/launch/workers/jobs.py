"""One job on every worker at once, followed to its end; the user's script as such a job; the
files it wrote copied back. A launch (bootstrap, the verifier, the script) and a run on a kept
node (``tpuwizard run``, ``watch``) both go through here, so both stream and end the same way and
speak in the same events (:class:`ScriptLine`, :class:`ScriptFinished`, :class:`FileFetched`,
:class:`FileNotFetched`).
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import StalledIn, WorkersStalled
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.compile_cache import cache_exports
from tpuwizard.core.launch.workers.distributed import (
    LAUNCHER_PATH,
    JoinTimeouts,
    join_env,
    launcher_source,
    script_command,
)
from tpuwizard.core.launch.workers.missing_module import SeesLines
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.fetch import FetchOutcome, fetch_matching
from tpuwizard.core.remote.jobs import (
    Job,
    fan_out,
    follow_job,
    got_sigterm,
    start_job,
    stop_job,
)
from tpuwizard.core.remote.transports import Raw, Transport, shell

Emit = Callable[[ev.Event], None]
# The script's whole output, every worker's lines, in the run folder (launch, run, watch).
OUTPUT_FILE = "output.txt"
PerWorker = Callable[[int], str]


def platform_env(expect: str, slice_: catalog.Slice) -> dict[str, str]:
    """JAX's platform for a job; in the sandbox (``cpu``), one CPU device per chip of the VM."""
    env = {"JAX_PLATFORMS": expect}
    if expect == "cpu":
        devices = slice_.devices_per_vm
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return env


def shell_env(expect: str, slice_: catalog.Slice) -> dict[str, str]:
    """What a shell on a worker gets of the scripts' environment (script_env), run id aside."""
    return {"COURSE_EXPECT_PLATFORM": expect, **platform_env(expect, slice_)}


def script_env(expect: str, slice_: catalog.Slice, run_id: str) -> dict[str, str]:
    """The one environment of tpuwizard's jobs on the workers (the verifier, a launch's script,
    ``run``'s and ``watch``'s): JAX's platform and the course's own variable, as the course runs
    ``COURSE_EXPECT_PLATFORM=tpu JAX_PLATFORMS=tpu python main.py`` (its main.py asks
    ``jax.devices(COURSE_EXPECT_PLATFORM)``, so one without the other fails on a TPU)."""
    return {
        "COURSE_EXPECT_PLATFORM": expect,
        **platform_env(expect, slice_),
        "TPUWIZARD_RUN_ID": run_id,
    }


def run_on_workers(
    transport: Transport,
    job: Job,
    command: str | PerWorker,
    env: dict[str, str] | Callable[[int], dict[str, str]],
    on_line: Callable[[int, str], None],
    cancel: CancelToken,
    on_start: Callable[[int, Job], None] | None = None,
    stall_s: float | None = None,
    phase: StalledIn = StalledIn.SCRIPT,
) -> int:
    """Start ``job`` detached on every worker at once and follow each to its end; returns the
    first non-zero exit code, else 0. ``on_start`` hears of each job as it starts (so that a
    stop can end it); a set ``cancel`` raises :class:`~tpuwizard.core.cancel.Cancelled`.
    ``stall_s``: the stall guard's timeout (workers/stall.py), which ends the job on every
    worker and raises :class:`~tpuwizard.core.errors.WorkersStalled` naming ``phase``."""
    cancel.check()
    if stall_s:
        from tpuwizard.core.launch.workers.stall import StallGuard

        guard = StallGuard(transport, job, stall_s, phase=phase)

        def seen(worker: int, text: str) -> None:
            guard.line(worker, text)
            on_line(worker, text)

        with guard:
            code = run_on_workers(transport, job, command, env, seen, cancel, on_start)
        guard.check()
        return code

    def one(worker: int) -> int:
        if on_start is not None:
            on_start(worker, job)
        start_job(
            transport,
            worker,
            job,
            command(worker) if callable(command) else command,
            env(worker) if callable(env) else env,
        )
        return follow_job(transport, worker, job, lambda t: on_line(worker, t), cancel=cancel)

    codes = fan_out(transport, one)
    cancel.check()
    return next((int(c) for c in codes if c != 0), 0)  # type: ignore[call-overload]


def stop_on_workers(transport: Transport, job: Job) -> None:
    """End ``job`` (and what it started) on every worker; never raises."""
    fan_out(transport, lambda worker: stop_job(transport, worker, job))


@dataclass(frozen=True)
class ScriptJob:
    """The user's script as a job: run in ``folder`` on every worker with ``python`` (relative
    to that folder), joined by ``jax.distributed`` through ``coordinator`` where JAX cannot find
    the slice itself (the sandbox)."""

    job: Job
    folder: str
    python: str
    script: str  # a safe file name in ``folder``
    args: Sequence[str]
    coordinator: str | None
    env: dict[str, str] = field(default_factory=dict)
    # Worker 0's internal address and a port the slice's firewall opens, for
    # JAX_COORDINATOR_ADDRESS (TPU API and Compute Engine slices; distributed.py says why).
    slice_address: str | None = None
    timeouts: JoinTimeouts = field(default_factory=JoinTimeouts)
    stall_s: float | None = None  # the stall guard's timeout; None: no guard
    compile_cache: bool = False  # a kept node's: JAX's cache in a folder kept on the node

    def command(self) -> str:
        # The launcher (verify/tpu_launch.py) sits in REMOTE_DIR; both paths are the home's.
        launcher = posixpath.relpath(LAUNCHER_PATH, self.folder)
        run = script_command(self.python, self.script, self.args, launcher)
        cache = cache_exports() + " " if self.compile_cache else ""
        # exec: the script's Python is the job's own process, so the SIGTERM its wrapper passes
        # on (start_job) reaches the script, not a shell that would die of it and leave it be.
        return cache + shell("cd", self.folder, Raw("&&"), Raw("exec")) + " " + run

    def env_for(self, worker: int, workers: int) -> dict[str, str]:
        return {
            **self.env,
            **self.timeouts.env(),
            "TPUWIZARD_JOB_DIR": self.job.folder,
            **join_env(worker, workers, self.coordinator, self.slice_address),
        }


@dataclass(frozen=True)
class ScriptEnd:
    """How the script's job ended, as its record on the workers says."""

    code: int  # the first non-zero exit code of the workers, else 0
    # The workers whose job wrapper recorded passing a SIGTERM on to the script (its mark in
    # the job's folder): a signal tpuwizard saw, not guessed from an exit code of 143.
    sigterm: tuple[int, ...] = ()


def run_script_job(
    transport: Transport,
    script: ScriptJob,
    emit: Emit,
    cancel: CancelToken,
    on_start: Callable[[int, Job], None] | None = None,
    output: Path | None = None,
    watch: SeesLines | None = None,
) -> ScriptEnd:
    """Run the script on every worker, each line a :class:`ScriptLine`, then
    :class:`ScriptFinished`; returns how it ended (:class:`ScriptEnd`).

    ``output``: the file that keeps every line of every worker, as it arrives (``[wN] `` before
    each on a multi-host slice), as the course keeps ``tpu-report.txt``; a later run into the same
    file (the wizard's Run again) is appended after a line that says so. ``watch`` reads the
    lines for a missing module (the diagnosis names the package that adds it)."""
    workers = transport.workers
    source = launcher_source().encode()
    fan_out(transport, lambda w: transport.upload(w, source, LAUNCHER_PATH))
    with OutputFile(output) as saved:

        def line(worker: int, text: str) -> None:
            if watch is not None:
                watch.see(text)
            saved.write(f"[w{worker}] {text}" if workers > 1 else text)
            emit(ev.ScriptLine(worker, text, workers))

        try:
            code = run_on_workers(
                transport,
                script.job,
                script.command(),
                lambda w: script.env_for(w, workers),
                line,
                cancel,
                on_start,
                script.stall_s,
            )
        except WorkersStalled as stalled:  # the whole report stays with the script's output
            saved.write("--- tpuwizard: the stall guard ended the run ---")
            for text in stalled.report.splitlines():
                saved.write(text)
            raise
    # A SIGTERM its wrapper passed on (a practice maintenance fault, a signal to the job): said
    # with how it exited, so a script that saved and exited 0 is not taken for an undisturbed run.
    told = tuple(w for w in range(workers) if got_sigterm(transport, w, script.job))
    emit(ev.ScriptFinished(code, str(output) if output is not None else None, told))
    return ScriptEnd(code, told)


class OutputFile:
    """The script's whole output in a local file, each line flushed as it comes (so a stop or a
    crash keeps what arrived); the workers' lines come from several threads at once."""

    AGAIN = "--- tpuwizard: the script ran again; its output follows ---"

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file: TextIO | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> OutputFile:
        if self.path is not None:
            again = self.path.exists() and self.path.stat().st_size > 0
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a", encoding="utf-8", errors="replace")
            if again:
                self.write(self.AGAIN)
        return self

    def write(self, text: str) -> None:
        if self._file is None:
            return
        with self._lock:
            self._file.write(text + "\n")
            self._file.flush()

    def __exit__(self, *_exc: object) -> None:
        if self._file is not None:
            with self._lock:
                self._file.close()
                self._file = None


def fetch_files(
    transport: Transport,
    folder: str,
    python: str,
    patterns: Sequence[str],
    dest: Path,
    emit: Emit,
) -> bool:
    """Copy what ``patterns`` match in ``folder`` on worker 0 into ``dest``, each file on its
    own, as :class:`FileFetched` and :class:`FileNotFetched`; True when a file did not come
    back whole (the run fails for it)."""
    incomplete = False
    seen: list[str] = []

    def report(outcome: FetchOutcome) -> None:
        nonlocal incomplete
        seen.append(outcome.rel)
        if outcome.local is not None:
            emit(ev.FileFetched(outcome.local))
        else:
            incomplete |= outcome.incomplete
            emit(ev.FileNotFetched(outcome.rel, outcome.reason, outcome.incomplete))

    listed = fetch_matching(transport, folder, python, patterns, dest, report)
    if not listed:  # the listing failed (reported): nothing is known to be missing
        return incomplete
    # A file named outright (no wildcard) that matched nothing: said now, on the script's step,
    # not only in the summary after the teardown; globs that matched nothing at all, together.
    globs = [p for p in patterns if any(c in p for c in "*?[")]
    for named in patterns:
        if named not in globs and not any(_under(rel, named) for rel in seen):
            emit(ev.FileNotFetched(named, "your script left no file of that name"))
    if globs and not seen:
        emit(ev.NothingMatched(tuple(globs)))
    return incomplete


def _under(rel: str, named: str) -> bool:
    clean = named.strip().strip("/").removeprefix("./")
    return rel == clean or rel.startswith(clean + "/")
