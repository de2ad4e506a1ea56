"""The part of a launch that runs on the workers: bootstrap, the verifier, the user's script.

:class:`~tpuwizard.core.launch.lifecycle.launch.Launch` runs ``WorkerSteps`` once the node answers;
the node and the list of running jobs (which a stop ends) are in the launch's shared
:class:`~tpuwizard.core.launch.lifecycle.launch_state.LaunchState`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tpuwizard.core import paths
from tpuwizard.core.cloud.diagnose.tpu_text import TpuErrorWatch
from tpuwizard.core.errors import (
    PackagesFailed,
    RemoteError,
    ScriptFailed,
    StalledIn,
    VerifierTpuError,
    WorkersStalled,
)
from tpuwizard.core.evidence.receipt import parse_marker_line
from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME, verifier_flags, verifier_source
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext
from tpuwizard.core.launch.plan.packages import package_names
from tpuwizard.core.launch.plan.parts import Workload
from tpuwizard.core.launch.plan.workload_rules import safe_script_name
from tpuwizard.core.launch.resume.checkpoint_copier import ResumeSetup
from tpuwizard.core.launch.workers.distributed import (
    LAUNCHER_PATH,
    JoinTimeouts,
    coordinator_for,
    launcher_source,
    slice_coordinator,
)
from tpuwizard.core.launch.workers.held_chip import TPU_DEVICE_FILES, check_chip
from tpuwizard.core.launch.workers.jobs import (
    OUTPUT_FILE,
    run_on_workers,
    script_env,
)
from tpuwizard.core.launch.workers.output_watch import ScriptOutputWatch
from tpuwizard.core.plan import jax_versions
from tpuwizard.core.plan.catalog import Slice
from tpuwizard.core.remote.bootstrap import BootstrapPlan, bootstrap_script, unpinned_jax
from tpuwizard.core.remote.jobs import Job, fan_out
from tpuwizard.core.remote.packages import FAILED_KIND, install_commands, install_failure
from tpuwizard.core.remote.sync import WORK_DIR, LocalFolder
from tpuwizard.core.remote.transports import REMOTE_DIR, Transport, shell


def bootstrap_failure_text(code: int, failures: dict[int, dict[str, Any]]) -> str:
    """What a failed bootstrap lacked and the command that supplies it, from its marker."""
    if not failures:
        return f"setting up JAX on the worker failed (exit {code}); the lines above say why"
    worker, failure = min(failures.items())
    return (
        f"setting up JAX on worker {worker} failed: missing {failure.get('missing')}. "
        f"Fix: {failure.get('fix')}"
    )


# Practice's chooser of the JAX a worker can run (Runtime.worker_jax): given the plan's --jax
# and a way to say a line, the version and the line saying why it is another.
JaxChooser = Callable[[str | None, Callable[[str], None]], tuple[str | None, str | None]]


@dataclass(frozen=True)
class WorkerInput:
    """What the worker steps read of the plan and the runtime (lifecycle/part_inputs.py makes
    it): what to install, verify and run, and how the workers' devices are checked and joined."""

    run_id: str  # names the jobs and the workers' run folder
    run_dir: Path  # receipts, traces, the script's output and fetched files come here
    slice: Slice
    # The bootstrap: the runtime's plan pinned to --jax (in practice, what the chooser says).
    bootstrap: BootstrapPlan
    # What runs there: the venv's JAX and packages, the verifier's extra checks (precision,
    # trace), the user's script, its arguments and the files it fetches back (parts.py).
    workload: Workload
    worker_jax: JaxChooser | None  # practice only
    # The verifier: which devices it expects, how multi-host workers join.
    expect: str
    explicit_coordinator: bool  # the sandbox names the coordinator; on Cloud TPU JAX finds it
    join_timeout: int
    # The stall guard's timeout in seconds (--stall-timeout; None: no guard) and the join's
    # timeouts the launcher gives the script's jax.distributed.initialize().
    stall_s: float | None = None
    join_timeouts: JoinTimeouts = field(default_factory=JoinTimeouts)
    # The chip's device files, whose holders are listed before a rerun (Runtime.chip_files).
    chip_files: tuple[str, ...] = TPU_DEVICE_FILES


class WorkerSteps:
    """Bootstrap, verify and run the script on every worker, streaming their lines as events."""

    def __init__(self, given: WorkerInput, ctx: LaunchContext) -> None:
        self.given = given
        self.emit, self.cancel, self.state = ctx.emit, ctx.cancel, ctx.state
        self.slice = given.slice
        self.versions: dict[int, dict[str, Any]] = {}
        self.checks: dict[int, dict[str, bool]] = {}
        self.bootstrap_failures: dict[int, dict[str, Any]] = {}
        # Each worker's bootstrap lines, and the workers whose package install failed: uv's
        # words there say why (core/remote/packages.py).
        self.bootstrap_lines: dict[int, list[str]] = {}
        self.packages_failed: list[int] = []
        self.receipt_ok = False
        self.script_exit_code: int | None = None  # the last run's, once it finished
        # The workers whose script job recorded a SIGTERM passed on to it, in the last run.
        self.script_sigterm: tuple[int, ...] = ()
        self.fetch_incomplete = False  # a file of the last run's did not come back whole
        self._folder: LocalFolder | None = None  # the script's folder, hashed once per file
        self.resume: ResumeSetup | None = None  # --checkpoints: set by the chain per attempt
        self._chosen_jax: tuple[str | None, str | None] | None = None  # _worker_version's
        self._verifier_said: dict[int, TpuErrorWatch] = {}  # what the TPU said, per worker

    def bootstrap(self, transport: Transport) -> None:
        data = verifier_source().encode()
        for worker in range(transport.workers):
            transport.upload(worker, data, f"{REMOTE_DIR}/{VERIFIER_FILENAME}")
        job = Job(f"bootstrap-{self.given.run_id}")
        if (said := self._worker_version()[1]) is not None:
            self.emit(ev.BootstrapLine(0, said, self.slice.vms))
        self.bootstrap_failures, self.bootstrap_lines, self.packages_failed = {}, {}, []
        specs = [s.text for s in self.given.workload.packages]
        script = bootstrap_script(
            self.worker_jax, install_commands(specs), package_names(self.given.workload.packages)
        )
        code = self._job(transport, job, shell("bash", "-c", script), {}, self._bootstrap_line)
        if self.packages_failed:
            worker = min(self.packages_failed)
            failure = install_failure(self.bootstrap_lines.get(worker, []), specs, code)
            raise PackagesFailed(worker, failure.kind, failure.why, failure.fix)
        if code != 0:
            raise RemoteError(bootstrap_failure_text(code, self.bootstrap_failures))
        problem = unpinned_jax(self.worker_jax, self.versions)
        if problem:
            raise RemoteError(problem)

    @property
    def worker_jax(self) -> BootstrapPlan:
        """The runtime's bootstrap, pinned to the plan's --jax where it names one (in practice,
        one the worker can run: Runtime.worker_jax)."""
        return self.given.bootstrap.with_jax(self._worker_version()[0])

    def _worker_version(self) -> tuple[str | None, str | None]:
        """The plan's --jax, or in practice the version its workers can run and the line saying
        why it is another; asked once per launch (practice may build an environment for it,
        saying so on the way)."""
        choose = self.given.worker_jax
        if choose is None:
            return self.given.workload.jax, None
        if self._chosen_jax is None:
            self._chosen_jax = choose(self.given.workload.jax, self._say)
        return self._chosen_jax

    def _say(self, line: str) -> None:
        self.emit(ev.BootstrapLine(0, line, self.slice.vms))

    def _bootstrap_line(self, worker: int, text: str) -> None:
        payload = parse_marker_line(text)
        self.bootstrap_lines.setdefault(worker, []).append(text)
        if payload and payload.get("kind") == FAILED_KIND:
            self.packages_failed.append(worker)
        elif payload and payload.get("kind") == "versions":
            versions = {k: v for k, v in payload.items() if k != "kind"}
            self.versions[worker] = versions
            laptop = jax_versions.laptop_jax()
            self.emit(ev.Versions(worker, versions, self.slice.vms, laptop_jax=laptop))
        elif payload and payload.get("kind") == "bootstrap_failed":
            self.bootstrap_failures[worker] = payload
            missing = f"missing: {payload.get('missing')}"
            self.emit(ev.BootstrapLine(worker, missing, self.slice.vms))
        else:
            self.emit(ev.BootstrapLine(worker, text, self.slice.vms))

    def _env(self) -> dict[str, str]:
        return script_env(self.given.expect, self.slice, self.given.run_id)

    def _coordinator(self) -> str | None:
        node = self.state.node
        return coordinator_for(node.endpoints if node else (), self.given.explicit_coordinator)

    def _slice_address(self) -> str | None:
        """Worker 0's internal address and a port the slice's firewall opens, where JAX finds
        the slice itself (TPU API and Compute Engine; not the sandbox)."""
        node = self.state.node
        if self.given.explicit_coordinator or node is None:
            return None
        return slice_coordinator(node.endpoints, self.slice.vms)

    @property
    def remote_run(self) -> str:
        """This launch's folder on the workers: the verifier's receipt and trace."""
        return f"{REMOTE_DIR}/runs/{self.given.run_id}"

    @property
    def script_environment(self) -> dict[str, str]:
        """What the script runs with (a shell between runs gets it too)."""
        return self._env()

    @property
    def script_folder(self) -> str:
        """Where the script runs on the workers: its folder's copy, as ``tpuwizard run``'s."""
        return WORK_DIR

    def verify(self, transport: Transport) -> None:
        from tpuwizard.core.evidence.receipt import check_receipt, load_receipt
        from tpuwizard.core.launch.workers import multihost

        given = self.given
        receipt = f"{self.remote_run}/receipt.json"
        multihost.check_versions(self.versions)  # before they hang on a mismatch
        join = multihost.JoinPlan(
            self.slice.vms, self.slice.devices, self._coordinator(), given.join_timeout
        )

        def command(worker: int) -> str:
            extras = verifier_flags(precision=given.workload.precision, trace=given.workload.trace)
            for name in package_names(given.workload.packages):  # their versions go in the receipt
                extras += ["--package", name]
            laptop = jax_versions.laptop_jax()
            extras += ["--laptop-jax", laptop] if laptop else []
            if given.workload.trace:
                extras += ["--trace-dir", f"{self.remote_run}/{self._trace_dir(worker)}"]
            # Through the launcher, as the script: a stack on SIGUSR1 and the join's marks, for
            # the stall guard.
            return shell(
                f"{REMOTE_DIR}/venv/bin/python",
                "-u",
                LAUNCHER_PATH,
                f"{REMOTE_DIR}/{VERIFIER_FILENAME}",
                "--expect",
                given.expect,
                "--min-devices",
                str(self.slice.devices_per_vm),
                "--receipt",
                receipt,
                *extras,
                *join.args(worker),
            )

        address = self._slice_address()
        job = Job(f"verify-{given.run_id}")
        env = {
            **self._env(),
            "TPUWIZARD_JOB_DIR": job.folder,
            **({"JAX_COORDINATOR_ADDRESS": address} if address else {}),
        }
        source = launcher_source().encode()
        fan_out(transport, lambda w: transport.upload(w, source, LAUNCHER_PATH))
        self._verifier_said = {w: TpuErrorWatch() for w in range(transport.workers)}
        try:  # a worker that hangs here is caught as in the script (no output, no CPU time)
            code = run_on_workers(
                transport,
                job,
                command,
                env,
                self._verifier_line,
                self.cancel,
                self._started,
                given.stall_s,
                StalledIn.VERIFIER,
            )
        except WorkersStalled as stalled:  # every frame, kept in the run folder
            (given.run_dir / stalled.phase.report_file).write_text(stalled.report + "\n")
            raise
        said_by_the_tpu = self._tpu_trouble() if code != 0 else None
        if said_by_the_tpu is not None and not self._receipts_written(transport, receipt):
            raise said_by_the_tpu  # the TPU's words say why no receipt came
        if self.slice.vms > 1:
            multihost.incomplete(self.slice.vms, self.checks, join.timeout)
        saved: dict[int, Path] = {}
        for worker in range(transport.workers):
            local = given.run_dir / (
                "receipt.json" if transport.workers == 1 else f"receipt-w{worker}.json"
            )
            local.write_bytes(transport.fetch(worker, receipt))
            saved[worker] = local
            data = load_receipt(local)
            self.receipt_ok = check_receipt(data, given.expect, None).ok
            if given.workload.trace:
                self._fetch_trace(transport, worker, data)
            if transport.workers == 1:
                self.state.receipt = str(local)
                self.emit(ev.ReceiptSaved(str(local), self.receipt_ok, data["receipt_sha256"]))
        if transport.workers > 1:
            whole = multihost.write_slice_receipt(given.run_dir, self.slice, saved)
            self.receipt_ok = bool(whole["ok"])
            self.state.receipt = str(given.run_dir / multihost.SLICE_RECEIPT)
            self.emit(ev.ReceiptSaved(self.state.receipt, self.receipt_ok, whole["receipt_sha256"]))
        if said_by_the_tpu is not None and not self.receipt_ok:
            raise said_by_the_tpu  # a check failed, and the TPU said why

    def _tpu_trouble(self) -> VerifierTpuError | None:
        """What the TPU said in the first worker's verifier output that names any trouble."""
        for worker, watch in sorted(self._verifier_said.items()):
            if watch.found is not None:
                return VerifierTpuError(worker, watch.found)
        return None

    def _receipts_written(self, transport: Transport, receipt: str) -> bool:
        """Whether every worker's verifier wrote its receipt (one that died before JAX started
        did not)."""
        present = [transport.run(w, shell("test", "-f", receipt)) for w in range(transport.workers)]
        return all(result.code == 0 for result in present)

    def _trace_dir(self, worker: int) -> str:
        """Each worker's trace folder, named as it will be in the local run folder."""
        return "trace" if self.slice.vms == 1 else f"trace-w{worker}"

    def _fetch_trace(self, transport: Transport, worker: int, receipt: dict[str, Any]) -> None:
        """Copy back the trace files the worker's receipt lists, into run_dir/trace[-wN]/."""
        folder = self._trace_dir(worker)
        trace = receipt.get("trace") or {}
        for entry in trace.get("files") or []:
            rel = str(entry.get("path", ""))
            if not rel or rel.startswith("/") or ".." in rel.split("/"):
                continue  # only files inside the trace folder
            target = self.given.run_dir / folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(transport.fetch(worker, f"{self.remote_run}/{folder}/{rel}"))
            self.emit(ev.FileFetched(str(target)))

    def _verifier_line(self, worker: int, text: str) -> None:
        if worker in self._verifier_said:
            self._verifier_said[worker].see(text)
        payload = parse_marker_line(text)
        if payload is None:
            self.emit(ev.VerifierLine(worker, text, self.slice.vms))
        elif payload.get("kind") == "check":
            self.checks.setdefault(worker, {})[payload["name"]] = bool(payload["ok"])
            self.emit(
                ev.Check(
                    worker,
                    payload["name"],
                    bool(payload["ok"]),
                    payload["detail"],
                    payload["boundary"],
                )
            )

    def check_chip(self, transport: Transport, even_if_held: bool) -> None:
        """Before the script runs again on this node: who holds its TPU on every worker, as
        before a run on a kept node (held_chip.py): an earlier run's holder is ended; another's
        raises ``ChipHeld`` unless ``even_if_held``."""
        node = self.state.node
        name = node.name if node is not None else self.given.run_id
        check_chip(transport, name, self.given.chip_files, even_if_held, self.emit)

    def run_script(self, transport: Transport) -> None:
        """Copy the script's folder (what changed since the last copy: a rerun sends only the
        edit) and run the script there on every worker, as ``tpuwizard run`` does."""
        from tpuwizard.core.launch.workers.script_pass import (
            ScriptPass,
            copy_folder,
            run_then_fetch,
        )

        given = self.given
        script = given.workload.script
        assert script is not None
        self.script_sigterm = ()
        if self._folder is None:
            self._folder = LocalFolder.of_script(script)
        copy_folder(transport, self._folder, self.emit)
        watch = ScriptOutputWatch(script)
        step = ScriptPass(
            Job(f"script-{given.run_id}"),
            safe_script_name(script.name),
            given.workload.script_args,
            self._coordinator(),  # a bare jax.distributed.initialize() joins them
            self._env(),
            given.run_dir / OUTPUT_FILE,
            given.workload.fetch,
            paths.fetched_files(given.run_dir),
            self.resume,
            self._slice_address(),
            given.join_timeouts,
            given.stall_s,
        )
        # A file that did not arrive whole makes the run fail (exit 1); its event comes before
        # teardown, so the user hears of it while the node still exists.
        done = run_then_fetch(transport, step, watch, self.emit, self.cancel, self._started)
        self.fetch_incomplete = done.incomplete
        self.script_exit_code, self.script_sigterm = done.code, done.sigterm
        if done.code != 0:
            raise ScriptFailed(done.code, watch.module, watch.package, watch.tpu_error)

    def _started(self, worker: int, job: Job) -> None:
        self.state.running_jobs.append((worker, job))  # a stop ends it

    def _job(
        self,
        transport: Transport,
        job: Job,
        command: str | Callable[[int], str],
        env: dict[str, str],
        on_line: Callable[[int, str], None],
    ) -> int:
        return run_on_workers(transport, job, command, env, on_line, self.cancel, self._started)
