"""The part of a launch that runs on the workers: bootstrap, the verifier, the user's script.

:class:`~tpuwizard.core.launch.lifecycle.Launch` runs ``WorkerSteps`` once the node answers; the
node and the list of running jobs (which a stop ends) are in the launch's shared
:class:`~tpuwizard.core.launch.launch_state.LaunchState`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import RemoteError, ScriptFailed
from tpuwizard.core.evidence.receipt import parse_marker_line
from tpuwizard.core.evidence.verifier import VERIFIER_FILENAME, verifier_flags, verifier_source
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.distributed import coordinator_for, join_env, script_command
from tpuwizard.core.launch.launch_state import LaunchState
from tpuwizard.core.launch.plan import LaunchPlan, safe_script_name
from tpuwizard.core.launch.runtime import Runtime
from tpuwizard.core.plan import catalog
from tpuwizard.core.remote.bootstrap import bootstrap_script, unpinned_jax
from tpuwizard.core.remote.fetch import FetchOutcome, fetch_matching
from tpuwizard.core.remote.jobs import Job, fan_out
from tpuwizard.core.remote.transports import REMOTE_DIR, Raw, Transport, shell


def bootstrap_failure_text(code: int, failures: dict[int, dict[str, Any]]) -> str:
    """What a failed bootstrap lacked and the command that supplies it, from its marker."""
    if not failures:
        return f"setting up JAX on the worker failed (exit {code}); the lines above say why"
    worker, failure = min(failures.items())
    return (
        f"setting up JAX on worker {worker} failed: missing {failure.get('missing')}. "
        f"Fix: {failure.get('fix')}"
    )


class WorkerSteps:
    """Bootstrap, verify and run the script on every worker, streaming their lines as events."""

    def __init__(
        self,
        plan: LaunchPlan,
        rt: Runtime,
        emit: Callable[[ev.Event], None],
        cancel: CancelToken,
        state: LaunchState,
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.state = state
        self.slice = catalog.parse_accelerator(plan.accelerator)
        self.versions: dict[int, dict[str, Any]] = {}
        self.checks: dict[int, dict[str, bool]] = {}
        self.bootstrap_failures: dict[int, dict[str, Any]] = {}
        self.receipt_ok = False
        self.script_exit_code: int | None = None  # the last run's, once it finished
        self.fetch_incomplete = False  # a file of the last run's did not come back whole

    def bootstrap(self, transport: Transport) -> None:
        data = verifier_source().encode()
        for worker in range(transport.workers):
            transport.upload(worker, data, f"{REMOTE_DIR}/{VERIFIER_FILENAME}")
        job = Job(f"bootstrap-{self.plan.run_id}")
        self.bootstrap_failures = {}
        code = self._job(
            transport,
            job,
            shell("bash", "-c", bootstrap_script(self.rt.bootstrap)),
            {},
            self._bootstrap_line,
        )
        if code != 0:
            raise RemoteError(bootstrap_failure_text(code, self.bootstrap_failures))
        problem = unpinned_jax(self.rt.bootstrap, self.versions)
        if problem:
            raise RemoteError(problem)

    def _bootstrap_line(self, worker: int, text: str) -> None:
        payload = parse_marker_line(text)
        if payload and payload.get("kind") == "versions":
            versions = {k: v for k, v in payload.items() if k != "kind"}
            self.versions[worker] = versions
            self.emit(ev.Versions(worker, versions, self.slice.vms))
        elif payload and payload.get("kind") == "bootstrap_failed":
            self.bootstrap_failures[worker] = payload
            missing = f"missing: {payload.get('missing')}"
            self.emit(ev.BootstrapLine(worker, missing, self.slice.vms))
        else:
            self.emit(ev.BootstrapLine(worker, text, self.slice.vms))

    def _env(self) -> dict[str, str]:
        expect = self.rt.expect
        env = {"COURSE_EXPECT_PLATFORM": expect, "JAX_PLATFORMS": expect}
        if expect == "cpu":  # the sandbox: one CPU device per chip of the VM
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={self.slice.devices_per_vm}"
        return env

    def _coordinator(self) -> str | None:
        node = self.state.node
        return coordinator_for(node.endpoints if node else (), self.rt.explicit_coordinator)

    @property
    def remote_run(self) -> str:
        return f"{REMOTE_DIR}/runs/{self.plan.run_id}"

    def verify(self, transport: Transport) -> None:
        from tpuwizard.core.evidence.receipt import check_receipt, load_receipt
        from tpuwizard.core.launch import multihost

        receipt = f"{self.remote_run}/receipt.json"
        multihost.check_versions(self.versions)  # before they hang on a mismatch
        join = multihost.JoinPlan(
            self.slice.vms, self.slice.devices, self._coordinator(), self.rt.join_timeout
        )

        def command(worker: int) -> str:
            extras = verifier_flags(precision=self.plan.precision, trace=self.plan.trace)
            if self.plan.trace:
                extras += ["--trace-dir", f"{self.remote_run}/{self._trace_dir(worker)}"]
            return shell(
                f"{REMOTE_DIR}/venv/bin/python",
                "-u",
                f"{REMOTE_DIR}/{VERIFIER_FILENAME}",
                "--expect",
                self.rt.expect,
                "--min-devices",
                str(self.slice.devices_per_vm),
                "--receipt",
                receipt,
                *extras,
                *join.args(worker),
            )

        self._job(
            transport, Job(f"verify-{self.plan.run_id}"), command, self._env(), self._verifier_line
        )
        if self.slice.vms > 1:
            multihost.incomplete(self.slice.vms, self.checks, join.timeout)
        saved: dict[int, Path] = {}
        for worker in range(transport.workers):
            local = self.plan.run_dir / (
                "receipt.json" if transport.workers == 1 else f"receipt-w{worker}.json"
            )
            local.write_bytes(transport.fetch(worker, receipt))
            saved[worker] = local
            data = load_receipt(local)
            self.receipt_ok = check_receipt(data, self.rt.expect, None).ok
            if self.plan.trace:
                self._fetch_trace(transport, worker, data)
            if transport.workers == 1:
                self.emit(ev.ReceiptSaved(str(local), self.receipt_ok, data["receipt_sha256"]))
        if transport.workers > 1:
            whole = multihost.write_slice_receipt(self.plan.run_dir, self.plan.accelerator, saved)
            self.receipt_ok = bool(whole["ok"])
            self.emit(
                ev.ReceiptSaved(
                    str(self.plan.run_dir / multihost.SLICE_RECEIPT),
                    self.receipt_ok,
                    whole["receipt_sha256"],
                )
            )

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
            target = self.plan.run_dir / folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(transport.fetch(worker, f"{self.remote_run}/{folder}/{rel}"))
            self.emit(ev.FileFetched(str(target)))

    def _verifier_line(self, worker: int, text: str) -> None:
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

    def run_script(self, transport: Transport) -> None:
        script = self.plan.script
        assert script is not None
        remote = f"{self.remote_run}/{safe_script_name(script.name)}"
        data = script.read_bytes()  # to every worker: each runs it, not only worker 0
        fan_out(transport, lambda w: transport.upload(w, data, remote, mode="700"))
        coordinator = self._coordinator()  # a bare jax.distributed.initialize() joins them
        command = (
            shell("cd", self.remote_run, Raw("&&"))
            + " "
            + (
                script_command(
                    "../../venv/bin/python",
                    safe_script_name(script.name),
                    self.plan.script_args,
                    coordinator,
                )
            )
        )
        workers = transport.workers
        code = self._job(
            transport,
            Job(f"script-{self.plan.run_id}"),
            command,
            lambda w: {**self._env(), **join_env(w, workers, coordinator)},
            lambda w, t: self.emit(ev.ScriptLine(w, t, self.slice.vms)),
        )
        self.emit(ev.ScriptFinished(code))
        self._fetch_outputs(transport)
        self.script_exit_code = code
        if code != 0:
            raise ScriptFailed(code)

    def _fetch_outputs(self, transport: Transport) -> None:
        """Copy back what the fetch patterns match into run_dir/files/, each file on its own.

        A file that did not arrive whole makes the run fail (exit 1); its event comes before
        teardown, so the user hears of it while the node still exists.
        """
        self.fetch_incomplete = False

        def report(outcome: FetchOutcome) -> None:
            if outcome.local is not None:
                self.emit(ev.FileFetched(outcome.local))
            else:
                self.fetch_incomplete |= outcome.incomplete
                self.emit(ev.FileNotFetched(outcome.rel, outcome.reason, outcome.incomplete))

        fetch_matching(
            transport,
            self.remote_run,
            "../../venv/bin/python",
            self.plan.fetch,
            self.plan.run_dir / "files",
            report,
        )

    def _job(
        self,
        transport: Transport,
        job: Job,
        command: str | Callable[[int], str],
        env: dict[str, str] | Callable[[int], dict[str, str]],
        on_line: Callable[[int, str], None],
    ) -> int:
        from tpuwizard.core.remote.jobs import follow_job, start_job

        self.cancel.check()

        def one(worker: int) -> int:
            self.state.running_jobs.append((worker, job))
            start_job(
                transport,
                worker,
                job,
                command(worker) if callable(command) else command,
                env(worker) if callable(env) else env,
            )
            return follow_job(
                transport, worker, job, lambda t: on_line(worker, t), cancel=self.cancel
            )

        codes = fan_out(transport, one)
        self.cancel.check()
        return next((c for c in codes if c != 0), 0)  # type: ignore[return-value]
