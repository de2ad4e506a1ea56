"""Arming the on-VM watchdog that deletes a run's resource at its deadline.

The watchdog (``verify/tpu_watchdog.py``, standard library only) runs detached on worker 0 and
calls the TPU API with the VM's own token, so the deadline holds when the laptop is off. Before
it is started, it asks whether that token may delete; if not, the run goes on without it and
says which role to grant.
"""

from __future__ import annotations

from collections.abc import Callable

from tpuwizard.core.evidence.receipt import parse_marker_line
from tpuwizard.core.evidence.verifier import WATCHDOG_FILENAME, watchdog_source
from tpuwizard.core.launch import events as ev
from tpuwizard.core.launch.ledger import Resource
from tpuwizard.core.launch.runtime import WatchdogConfig
from tpuwizard.core.remote.jobs import Job, start_job
from tpuwizard.core.remote.transports import REMOTE_DIR, Transport, shell


def watchdog_job(run_id: str) -> Job:
    return Job(f"watchdog-{run_id}")


def arm_watchdog(
    transport: Transport,
    resource: Resource,
    deadline: float,
    config: WatchdogConfig,
    emit: Callable[[ev.Event], None],
) -> bool:
    """Start the watchdog for ``resource`` at ``deadline`` (epoch seconds); True when armed."""
    kind = "queuedResources" if resource.kind == "queued" else "nodes"
    path = f"projects/{resource.project}/locations/{resource.zone}/{kind}/{resource.name}"
    script = f"{REMOTE_DIR}/{WATCHDOG_FILENAME}"
    transport.upload(0, watchdog_source().encode(), script)
    if config.token.startswith("file:") and config.token_secret:
        transport.upload(0, config.token_secret.encode(), config.token[len("file:") :])
    command = [
        config.python,
        script,
        "--resource",
        path,
        "--endpoint",
        config.endpoint,
        "--iam-endpoint",
        config.iam_endpoint,
        "--token",
        config.token,
        "--retry",
        str(config.retry),
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
        emit(ev.Watchdog(False, deadline, detail))
        return False
    start_job(
        transport,
        0,
        watchdog_job(resource.run_id),
        shell(*command, "--deadline", str(round(deadline, 1))),
    )
    emit(
        ev.Watchdog(
            True,
            deadline,
            f"armed on worker 0: {resource.name} is deleted "
            "at the deadline even if this computer is off",
        )
    )
    return True
