"""One launch, from plan to verified teardown, as a stream of events.

``run_launch`` does the work in the calling thread and reports through ``emit``; ``events`` and
``async_events`` run it in a thread and hand the events to a front end. Teardown runs in a
``finally`` unless the plan says keep, so cancellation (a signal, Ctrl+Q, an exception) still tears
down: a front end that wants to stop sets the :class:`CancelToken` and keeps reading events until
``Finished``.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tpuwizard.core import catalog, cost, gcloud_config
from tpuwizard.core import events as ev
from tpuwizard.core.bootstrap import BootstrapPlan, bootstrap_script
from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.cloud import CreateFailed, NodeInfo, NodeRequest, TpuCloud
from tpuwizard.core.diagnose import Context, diagnose, preempted_diagnosis
from tpuwizard.core.errors import BadInput
from tpuwizard.core.ledger import Ledger, Resource
from tpuwizard.core.receipt import parse_marker_line
from tpuwizard.core.remote import REMOTE_DIR, Job, Raw, RemoteError, Transport, shell
from tpuwizard.core.teardown import delete_and_verify
from tpuwizard.core.verifier import (
    VERIFIER_FILENAME,
    WATCHDOG_FILENAME,
    verifier_source,
    watchdog_source,
)

ROUTES = ("vm", "spot", "flex")
EXIT_OK, EXIT_FAILED, EXIT_CLOUD, EXIT_TEARDOWN = 0, 1, 3, 4
DEFAULT_MAX_RUN = {"vm": 120, "spot": 120, "flex": 240}  # minutes


@dataclass(frozen=True)
class LaunchPlan:
    accelerator: str
    zone: str
    project: str
    run_id: str
    run_dir: Path
    route: str = "vm"
    name: str | None = None
    script: Path | None = None
    fetch: tuple[str, ...] = ()
    keep: bool = False
    max_run_minutes: float | None = None
    watchdog: bool = False
    failover: bool = False

    @property
    def node_name(self) -> str:
        return self.name or f"tpuwizard-{self.run_id}"

    def validate(self) -> catalog.Slice:
        """Everything that can be checked before any cloud call; raises :class:`BadInput`."""
        try:
            slice_ = catalog.parse_accelerator(self.accelerator)
        except catalog.UnknownAcceleratorError as err:
            raise BadInput(str(err)) from None
        gcloud_config.validate_zone(self.zone)
        gcloud_config.validate_project(self.project)
        gcloud_config.validate_node_name(self.node_name)
        if len(self.node_name) > 60 and self.route != "vm":
            raise BadInput(
                "Names for spot and flex routes must be at most 60 characters "
                "(the queued resource adds '-qr')."
            )
        if self.route not in ROUTES:
            raise BadInput(f"Unknown route '{self.route}'. Choose one of: {', '.join(ROUTES)}.")
        if self.max_run_minutes is not None and not 0.1 <= self.max_run_minutes <= 7 * 24 * 60:
            raise BadInput("--max-run must be between 0.1 minutes and 7 days (10080 minutes).")
        if self.watchdog and self.route == "flex":
            raise BadInput(
                "Flex-start already ends at its deadline (its maxRunDuration): "
                "--watchdog is for the vm and spot routes."
            )
        if self.script is not None and not self.script.is_file():
            raise BadInput(f"Script {self.script} does not exist or is not a file.")
        for pattern in self.fetch:
            if pattern.startswith("/") or ".." in pattern.split("/"):
                raise BadInput(
                    f"--fetch '{pattern}' must be relative to the script's folder "
                    "and may not contain '..'."
                )
        return slice_


@dataclass(frozen=True)
class WatchdogConfig:
    """How the on-VM watchdog reaches the API: Google's, with the VM's token; or the sandbox."""

    python: str = "python3"
    endpoint: str = "https://tpu.googleapis.com"
    iam_endpoint: str = "https://cloudresourcemanager.googleapis.com"
    token: str = "metadata"
    retry: float = 30.0


@dataclass
class Runtime:
    """What a launch needs from the world: the cloud, the ledger, and how to reach workers."""

    cloud: TpuCloud
    ledger: Ledger
    make_transport: Callable[[NodeInfo], Transport]
    bootstrap: BootstrapPlan
    expect: str = "tpu"  # the sandbox runs on CPU devices and says so
    practice: bool = False
    ssh_metadata: dict[str, str] = field(default_factory=dict)
    poll: float = 2.0
    watchdog: WatchdogConfig = field(default_factory=WatchdogConfig)
    # Multi-host: the sandbox names the coordinator; on Cloud TPU jax.distributed finds it.
    explicit_coordinator: bool = False
    join_timeout: int = 300
    ready_timeout: float = 1800
    reachable_timeout: float = 300


class Launch:
    """The steps of one launch. Private to this module: use :func:`run_launch`."""

    def __init__(
        self, plan: LaunchPlan, rt: Runtime, emit: Callable[[ev.Event], None], cancel: CancelToken
    ) -> None:
        self.plan, self.rt, self.emit, self.cancel = plan, rt, emit, cancel
        self.slice = plan.validate()
        self.zone = plan.zone
        self.resource: Resource | None = None
        self.node: NodeInfo | None = None
        self.versions: dict[int, dict] = {}
        self.checks: dict[int, dict[str, bool]] = {}
        self.created_at: float | None = None
        self.receipt_ok = False

    # -- steps ------------------------------------------------------------------------------
    def run(self) -> int:
        plan = self.plan
        plan.run_dir.mkdir(parents=True, exist_ok=True)
        self.emit(
            ev.Planned(
                plan.run_id,
                plan.node_name,
                plan.accelerator,
                plan.zone,
                plan.route,
                plan.project,
                self.slice.chips,
                self.slice.vms,
                cost.hourly(plan.accelerator, plan.route),
                self.max_run,
                self.rt.practice,
                str(plan.run_dir),
            )
        )
        code = EXIT_OK
        stage = "provision"
        try:
            node = self.provision()
            transport = self.rt.make_transport(node)
            stage = "connect"
            transport.wait_until_reachable(self.rt.reachable_timeout)
            self.emit(ev.SshReady(transport.workers))
            self.cancel.check()
            stage = "bootstrap"
            self.bootstrap(transport)
            if plan.watchdog:
                self.arm_watchdog(transport)
            stage = "verify"
            self.verify(transport)
            if plan.script is not None:
                stage = "script"
                self.run_script(transport)
            code = EXIT_OK if self.receipt_ok else EXIT_FAILED
        except Cancelled as err:
            self.emit(
                ev.Failed(
                    stage,
                    {
                        "kind": "cancelled",
                        "title": "Stopped",
                        "explanation": f"The launch was stopped ({err}).",
                        "next_steps": [],
                        "alternatives": [],
                    },
                )
            )
            code = EXIT_FAILED
        except Exception as err:  # every failure becomes a diagnosis, never a traceback
            d = diagnose(
                err,
                Context(
                    project=plan.project,
                    zone=self.zone,
                    accelerator=plan.accelerator,
                    name=plan.node_name,
                ),
            )
            if stage != "provision" and self._preempted():
                d = preempted_diagnosis(plan.route)
            self.emit(ev.Failed(stage, d.to_dict()))
            code = EXIT_CLOUD if stage in ("provision", "connect") else EXIT_FAILED
        finally:
            code = self.finish(code)
        return code

    @property
    def max_run(self) -> int:
        return self.plan.max_run_minutes or DEFAULT_MAX_RUN[self.plan.route]

    def provision(self) -> NodeInfo:
        tried = []
        while True:
            tried.append(self.zone)
            try:
                return self.create_in(self.zone)
            except CreateFailed as err:
                d = diagnose(
                    err,
                    Context(
                        project=self.plan.project, zone=self.zone, accelerator=self.plan.accelerator
                    ),
                )
                left = [z for z in d.alternatives if z not in tried]
                if not (self.plan.failover and d.kind == "stockout" and left):
                    raise
                self.emit(ev.ZoneFailover(self.zone, left[0], d.title))
                self.zone = left[0]

    def create_in(self, zone: str) -> NodeInfo:
        plan, rt = self.plan, self.rt
        req = NodeRequest(
            zone=zone,
            node_id=plan.node_name,
            accelerator_type=plan.accelerator,
            run_id=plan.run_id,
            metadata=dict(rt.ssh_metadata),
            spot=plan.route == "spot",
            cloud_platform_scope=plan.watchdog,
        )
        queued = plan.route in ("spot", "flex")
        name = f"{plan.node_name}-qr" if queued else plan.node_name
        resource = Resource(
            "queued" if queued else "node",
            plan.project,
            zone,
            name,
            plan.accelerator,
            plan.run_id,
            plan.route,
            plan.node_name if queued else None,
        )
        self.cancel.check()
        rt.ledger.record("intent", resource)  # before the call: a crash now still leaves a trace
        self.resource = resource
        started = time.time()
        operation = self._create_checked(req, resource, name)
        rt.ledger.record("created", resource)
        self.created_at = started

        def on_state(state: str) -> None:
            elapsed = time.time() - started
            self.emit(
                ev.Provisioning(
                    state, round(elapsed, 1), cost.estimate(plan.accelerator, plan.route, elapsed)
                )
            )

        try:
            if queued:
                rt.cloud.wait_for_queued(
                    zone, name, on_state, rt.ready_timeout, rt.poll, cancelled=self.cancel.is_set
                )
                node = rt.cloud.wait_for_node(
                    zone,
                    plan.node_name,
                    None,
                    None,
                    rt.ready_timeout,
                    rt.poll,
                    cancelled=self.cancel.is_set,
                )
            else:
                node = rt.cloud.wait_for_node(
                    zone,
                    plan.node_name,
                    operation,
                    on_state,
                    rt.ready_timeout,
                    rt.poll,
                    cancelled=self.cancel.is_set,
                )
        except CreateFailed:
            # A failed create (a stockout) may leave nothing or a broken node: clean either up
            # before trying elsewhere, so failover never leaves a trail.
            self.teardown()
            raise
        if len(node.endpoints) != self.slice.vms:
            raise RemoteError(
                f"{plan.accelerator} has {self.slice.vms} VMs but the node reports "
                f"{len(node.endpoints)} workers"
            )
        self.node = node
        self.emit(ev.Ready(len(node.endpoints), list(node.endpoints)))
        return node

    def _create_checked(self, req: NodeRequest, resource: Resource, qr_name: str) -> object:
        """Call create; after a transient failure, retry only once ``get`` shows nothing exists."""
        from google.api_core import exceptions as gx

        rt, plan = self.rt, self.plan
        for attempt in range(3):
            try:
                if resource.kind == "queued":
                    rt.cloud.create_queued(req, qr_name, plan.route, self.max_run * 60)
                    return None
                return rt.cloud.create_node(req)
            except Exception as err:
                exists = self._exists(resource)
                if exists is True:  # the call went through although its answer was lost
                    return None
                transient = isinstance(err, gx.ServiceUnavailable | gx.TooManyRequests) and (
                    not isinstance(err, gx.ResourceExhausted)
                )
                if exists is False and transient and attempt < 2:
                    self.cancel.sleep(1.0 + attempt)
                    continue
                if exists is False:
                    rt.ledger.record("gone", resource, never_created=True)
                    self.resource = None
                raise
        raise AssertionError("unreachable")  # the loop always returns or raises

    def _preempted(self) -> bool:
        """Did Google take a spot node away? Then that, not the broken command, is the news."""
        try:
            node = self.rt.cloud.get_node(self.zone, self.plan.node_name)
        except Exception:
            return False
        return node is not None and node.state == "PREEMPTED"

    def arm_watchdog(self, transport: Transport) -> None:
        """Start the on-VM watchdog that deletes this run's resource at the deadline."""
        from tpuwizard.core.remote import start_job

        resource = self.resource
        assert resource is not None and self.created_at is not None
        kind = "queuedResources" if resource.kind == "queued" else "nodes"
        path = f"projects/{resource.project}/locations/{resource.zone}/{kind}/{resource.name}"
        deadline = round(self.created_at + self.max_run * 60, 1)
        script = f"{REMOTE_DIR}/{WATCHDOG_FILENAME}"
        transport.upload(0, watchdog_source().encode(), script)
        w = self.rt.watchdog
        command = [
            w.python,
            script,
            "--resource",
            path,
            "--endpoint",
            w.endpoint,
            "--iam-endpoint",
            w.iam_endpoint,
            "--token",
            w.token,
            "--retry",
            str(w.retry),
        ]
        check = transport.run(0, shell(*command, "--check-only"), timeout=120)
        payload = next((p for p in map(parse_marker_line, check.stdout.splitlines()) if p), {})
        if check.code != 0 or not payload.get("ok"):
            missing = ", ".join(payload.get("missing", [])) or payload.get("error", "unknown")
            detail = (
                f"not armed: the VM's service account may not delete it ({missing}). Grant "
                "it roles/tpu.admin: gcloud projects add-iam-policy-binding "
                f"{resource.project} --member=serviceAccount:SERVICE_ACCOUNT "
                "--role=roles/tpu.admin (the VM runs as the Compute Engine default service "
                "account unless you chose another)"
            )
            self.emit(ev.Watchdog(False, deadline, detail))
            return
        start_job(
            transport,
            0,
            Job(f"watchdog-{self.plan.run_id}"),
            shell(*command, "--deadline", str(deadline)),
        )
        self.emit(
            ev.Watchdog(
                True,
                deadline,
                f"armed on worker 0: {resource.name} is deleted "
                "at the deadline even if this computer is off",
            )
        )

    def _exists(self, resource: Resource) -> bool | None:
        """After a failed create call: does it exist? None when we cannot tell."""
        try:
            cloud = self.rt.cloud
            if resource.kind == "queued":
                return cloud.get_queued(resource.zone, resource.name) is not None
            node = cloud.get_node(resource.zone, resource.name)
            return node is not None and node.labels.get("tpuwizard-run") == resource.run_id
        except Exception:
            return None

    def bootstrap(self, transport: Transport) -> None:
        data = verifier_source().encode()
        for worker in range(transport.workers):
            transport.upload(worker, data, f"{REMOTE_DIR}/{VERIFIER_FILENAME}")
        job = Job(f"bootstrap-{self.plan.run_id}")
        code = self._job(
            transport,
            job,
            shell("bash", "-c", bootstrap_script(self.rt.bootstrap)),
            {},
            self._bootstrap_line,
        )
        if code != 0:
            raise RemoteError(
                f"setting up JAX on the worker failed (exit {code}); the lines above say why"
            )

    def _bootstrap_line(self, worker: int, text: str) -> None:
        payload = parse_marker_line(text)
        if payload and payload.get("kind") == "versions":
            versions = {k: v for k, v in payload.items() if k != "kind"}
            self.versions[worker] = versions
            self.emit(ev.Versions(worker, versions, self.slice.vms))
        else:
            self.emit(ev.BootstrapLine(worker, text, self.slice.vms))

    def _env(self) -> dict[str, str]:
        expect = self.rt.expect
        env = {"COURSE_EXPECT_PLATFORM": expect, "JAX_PLATFORMS": expect}
        if expect == "cpu":  # the sandbox: one CPU device per chip of the VM
            env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={self.slice.devices_per_vm}"
        return env

    @property
    def remote_run(self) -> str:
        return f"{REMOTE_DIR}/runs/{self.plan.run_id}"

    def verify(self, transport: Transport) -> None:
        from tpuwizard.core import multihost
        from tpuwizard.core.receipt import check_receipt, load_receipt

        receipt = f"{self.remote_run}/receipt.json"
        multihost.check_versions(self.versions)  # before they hang on a mismatch
        host = self.node.endpoints[0] if self.node and self.node.endpoints else "127.0.0.1"
        join = multihost.JoinPlan(
            self.slice.vms,
            self.slice.devices,
            f"{host}:{multihost.free_port()}" if self.rt.explicit_coordinator else None,
            self.rt.join_timeout,
        )

        def command(worker: int) -> str:
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
        remote = f"{self.remote_run}/{_safe_name(script.name)}"
        transport.upload(0, script.read_bytes(), remote, mode="700")
        command = shell(
            "cd", self.remote_run, Raw("&&"), "../../venv/bin/python", "-u", _safe_name(script.name)
        )
        code = self._job(
            transport,
            Job(f"script-{self.plan.run_id}"),
            command,
            self._env(),
            lambda w, t: self.emit(ev.ScriptLine(w, t, self.slice.vms)),
        )
        self._fetch_outputs(transport)
        if code != 0:
            raise RemoteError(f"your script exited with code {code}")

    def _fetch_outputs(self, transport: Transport) -> None:
        if not self.plan.fetch:
            return
        lister = (
            "import glob, sys\nfor p in sys.argv[1:]:\n"
            "    for f in sorted(glob.glob(p, recursive=True)):\n        print(f)\n"
        )
        result = transport.run(
            0,
            shell(
                "cd",
                self.remote_run,
                Raw("&&"),
                "../../venv/bin/python",
                "-c",
                lister,
                *self.plan.fetch,
            ),
        )
        files = self.plan.run_dir / "files"
        for rel in result.stdout.splitlines():
            if not rel or rel.startswith("/") or ".." in rel.split("/"):
                continue
            target = files / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(transport.fetch(0, f"{self.remote_run}/{rel}"))
            self.emit(ev.FileFetched(str(target)))

    def _job(
        self,
        transport: Transport,
        job: Job,
        command: str | Callable[[int], str],
        env: dict[str, str],
        on_line: Callable[[int, str], None],
    ) -> int:
        from tpuwizard.core.remote import fan_out, follow_job, start_job

        self.cancel.check()

        def one(worker: int) -> int:
            start_job(
                transport, worker, job, command(worker) if callable(command) else command, env
            )
            return follow_job(
                transport, worker, job, lambda t: on_line(worker, t), cancel=self.cancel
            )

        codes = fan_out(transport, one)
        self.cancel.check()
        return next((c for c in codes if c != 0), 0)  # type: ignore[return-value]

    # -- the end ----------------------------------------------------------------------------
    def teardown(self) -> bool:
        resource = self.resource
        if resource is None:
            return True
        self.emit(ev.TeardownStarted(resource.name, resource.kind))
        result = delete_and_verify(
            self.rt.cloud, self.rt.ledger, resource, pause=min(2.0, self.rt.poll)
        )
        billed = time.time() - (self.created_at or time.time())
        if result.verified:
            self.emit(
                ev.TeardownVerified(
                    resource.name,
                    resource.kind,
                    round(billed, 1),
                    cost.estimate(resource.accelerator, resource.route, billed),
                )
            )
            self.resource = None
            return True
        d = result.diagnosis
        self.emit(ev.TeardownFailed(resource.name, resource.kind, d.to_dict() if d else {}))
        return False

    def finish(self, code: int) -> int:
        total = None
        if self.created_at is not None:
            total = cost.estimate(
                self.plan.accelerator, self.plan.route, time.time() - self.created_at
            )
        if self.resource is not None and self.plan.keep and not self.cancel.is_set():
            r = self.resource
            what = "queued-resources delete" if r.kind == "queued" else "tpu-vm delete"
            self.emit(
                ev.Kept(
                    r.name,
                    r.zone,
                    f"tpuwizard teardown {r.name}   (or: gcloud "
                    f"compute tpus {what} {r.name} --zone {r.zone})",
                )
            )
        elif not self.teardown():
            code = EXIT_TEARDOWN
        self._write_cost(total)
        self.emit(ev.Finished(code == EXIT_OK, code, str(self.plan.run_dir), total))
        return code

    def _write_cost(self, total: float | None) -> None:
        """The run's cost estimate, next to its receipt."""
        if self.created_at is None:
            return
        import json

        seconds = time.time() - self.created_at
        record = {
            "accelerator": self.plan.accelerator,
            "route": self.plan.route,
            "chips": self.slice.chips,
            "seconds": round(seconds, 1),
            "price_per_hour_usd": cost.hourly(self.plan.accelerator, self.plan.route),
            "cost_usd": total,
            "estimate": cost.label(),
            "practice": self.rt.practice,
        }
        (self.plan.run_dir / "cost.json").write_text(json.dumps(record, indent=2) + "\n")


def _safe_name(name: str) -> str:
    if not name or name.startswith(".") or not all(c.isalnum() or c in "._-" for c in name):
        raise BadInput(f"Script name '{name}' must be letters, digits, '.', '_' and '-' only.")
    return name


def run_launch(
    plan: LaunchPlan,
    rt: Runtime,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken | None = None,
) -> int:
    """Run one launch in this thread; returns its exit code (0, 1, 3 or 4)."""
    return Launch(plan, rt, emit, cancel or CancelToken()).run()


def events(plan: LaunchPlan, rt: Runtime, cancel: CancelToken) -> Iterator[ev.Event]:
    """The launch's events, produced by a worker thread; ends after ``Finished``."""
    plan.validate()  # bad input fails here, in the caller, before any thread or cloud call
    q: queue.Queue[ev.Event | None] = queue.Queue()

    def work() -> None:
        try:
            run_launch(plan, rt, q.put, cancel)
        finally:
            q.put(None)

    # Not a daemon: if the front end dies, the process stays until teardown is done.
    thread = threading.Thread(target=work, name="tpuwizard-launch")
    thread.start()
    while (item := q.get()) is not None:
        yield item
    thread.join()


async def async_events(
    plan: LaunchPlan, rt: Runtime, cancel: CancelToken
) -> AsyncIterator[ev.Event]:
    """The same stream for asyncio front ends (the TUI)."""
    iterator = events(plan, rt, cancel)
    while True:
        item = await asyncio.to_thread(next, iterator, None)
        if item is None:
            return
        yield item
