"""Working with a kept node: copy what changed, run the script on every worker, send heartbeats.

A node kept by ``tpuwizard up`` was bootstrapped and verified once; each run afterwards only
copies the changed files of the script's folder (:mod:`tpuwizard.core.remote.sync`) and starts
the script as a detached job in the venv on every worker. A stop (Ctrl+C) ends the script's jobs,
never the node. While a run goes on, a heartbeat keeps the on-VM watchdog's idle deadline away.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.errors import BadInput, RemoteError
from tpuwizard.core.exit_codes import EXIT_INTERRUPTED
from tpuwizard.core.launch.distributed import join_env, script_command
from tpuwizard.core.launch.plan import safe_fetch_pattern, safe_script_name, script_problems
from tpuwizard.core.launch.watchdog import HEARTBEAT_FILE
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.fetch import FetchOutcome, fetch_matching
from tpuwizard.core.remote.jobs import Job, fan_out, follow_job, start_job, stop_job
from tpuwizard.core.remote.sync import (
    WORK_DIR,
    WORK_PYTHON,
    LocalFolder,
    SyncResult,
    sync_folder,
)
from tpuwizard.core.remote.transports import Raw, Transport, shell

EXIT_STOPPED = EXIT_INTERRUPTED  # the user stopped the script (Ctrl+C); the node is kept


def send_heartbeat(transport: Transport) -> float:
    """Touch the heartbeat file on worker 0 (the watchdog's); returns when it was sent."""
    sent = time.time()
    result = transport.run(0, shell("touch", HEARTBEAT_FILE), timeout=60, cancellable=False)
    if result.code != 0:
        raise RemoteError(f"worker 0: {result.stderr.strip() or f'exit code {result.code}'}")
    return sent


@contextlib.contextmanager
def heartbeats(
    beat: Callable[[], object], interval: float, on_error: Callable[[str], None]
) -> Iterator[None]:
    """Call ``beat`` now and every ``interval`` seconds until the block ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(interval):
            try:
                beat()
            except Exception as err:  # a missed beat is reported; the run goes on
                on_error(f"heartbeat not sent: {err}")

    beat()
    thread = threading.Thread(target=loop, name="tpuwizard-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def heartbeat_interval(idle_s: float | None) -> float:
    """Often enough that two missed beats still leave time before the idle deadline."""
    return max(1.0, min(60.0, (idle_s or 1800) / 4))


@dataclass
class RunResult:
    exit_code: int  # the script's own code (the largest non-zero one across workers)
    synced: list[SyncResult] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    not_fetched: list[tuple[str, str]] = field(default_factory=list)
    fetch_incomplete: bool = False  # a file did not come back whole: the run failed
    stopped: bool = False


@dataclass(frozen=True)
class ScriptRun:
    """One run of the user's script on a kept node."""

    script: Path
    args: Sequence[str]
    run_id: str
    run_dir: Path
    accelerator: str
    expect: str  # "tpu", or "cpu" in the sandbox
    fetch: Sequence[str] = ()
    coordinator: str | None = None  # where JAX cannot find the slice itself (the sandbox)

    def problems(self) -> list[str]:
        found = script_problems(self.script)
        for pattern in self.fetch:
            try:
                safe_fetch_pattern(pattern)
            except BadInput as err:
                found.append(str(err))
        return found

    def env(self, worker: int, workers: int) -> dict[str, str]:
        env = {
            "JAX_PLATFORMS": self.expect,
            **join_env(worker, workers, self.coordinator),
            "TPUWIZARD_RUN_ID": self.run_id,
        }
        if self.expect == "cpu":  # the sandbox: one CPU device per chip of the VM
            devices = catalog.parse_accelerator(self.accelerator).devices_per_vm
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
        return env


def sync_note(synced: Sequence[SyncResult]) -> str:
    """One line: what was copied to the workers, and how (rsync, or tar and why not rsync)."""
    first = synced[0]
    if not first.changed and not first.deleted:
        return "nothing changed since the last copy"
    ways = sorted({s.method if s.method == "rsync" else f"tar: {s.why_not_rsync}" for s in synced})
    return (
        f"copied {len(first.changed)} changed file(s), {first.bytes_sent} bytes"
        + (f", removed {len(first.deleted)}" if first.deleted else "")
        + f" to {len(synced)} worker(s) in {max(s.seconds for s in synced):.2f} s"
        + f" ({'; '.join(ways)})"
    )


def run_script(
    transport: Transport,
    run: ScriptRun,
    folder: LocalFolder,
    on_line: Callable[[int, str], None],
    on_note: Callable[[str], None],
    cancel: CancelToken,
) -> RunResult:
    """Copy what changed, run the script on every worker, stream it, fetch its files.

    A set ``cancel`` stops the script's jobs on every worker (the node stays) and returns
    :data:`EXIT_STOPPED`.
    """
    result = RunResult(0)
    transport.cancel = cancel
    workers = transport.workers
    try:
        result.synced = list(
            fan_out(transport, lambda w: sync_folder(transport, w, folder))  # type: ignore[arg-type]
        )
    except Cancelled:
        return RunResult(EXIT_STOPPED, stopped=True)
    on_note(sync_note(result.synced))
    job = Job(f"run-{run.run_id}")
    script = safe_script_name(run.script.name)
    command = (
        shell("cd", WORK_DIR, Raw("&&"))
        + " "
        + (script_command(WORK_PYTHON, script, run.args, run.coordinator))
    )

    def one(worker: int) -> int:
        start_job(transport, worker, job, command, run.env(worker, workers))
        return follow_job(transport, worker, job, lambda t: on_line(worker, t), cancel=cancel)

    try:
        codes = fan_out(transport, one)
    except Cancelled:
        for worker in range(workers):  # the script, not the node
            stop_job(transport, worker, job)
        return RunResult(EXIT_STOPPED, result.synced, stopped=True)
    result.exit_code = next((int(c) for c in codes if c != 0), 0)  # type: ignore[call-overload]
    transport.cancel = None  # the files are copied back even after a late Ctrl+C
    _fetch(transport, run, result)
    return result


def _fetch(transport: Transport, run: ScriptRun, result: RunResult) -> None:
    """Copy what the patterns match on worker 0 into the run folder, each file on its own."""

    def report(outcome: FetchOutcome) -> None:
        if outcome.local is not None:
            result.fetched.append(outcome.local)
        else:
            result.not_fetched.append((outcome.rel, outcome.reason))
            result.fetch_incomplete |= outcome.incomplete

    fetch_matching(transport, WORK_DIR, WORK_PYTHON, run.fetch, run.run_dir, report)
