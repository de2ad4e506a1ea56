"""Arming the on-VM watchdog that deletes a run's resource at its deadline.

The watchdog (``verify/tpu_watchdog.py``, standard library only) runs detached on worker 0 and
calls the TPU API with the VM's own token, so the deadline holds when the laptop is off. Before
it is started, it asks whether that token may delete; if not, the run goes on without it and
says which role to grant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.evidence.receipt import parse_marker_line
from tpuwizard.core.evidence.verifier import WATCHDOG_FILENAME, watchdog_source
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.remote.jobs import Job, start_job
from tpuwizard.core.remote.transports import REMOTE_DIR, Transport, shell

# Touched on worker 0 by every run, watch and ssh on a kept node (and by the open wizard); the
# watchdog deletes the node when it has not changed for the idle time.
HEARTBEAT_FILE = f"{REMOTE_DIR}/heartbeat"


@dataclass(frozen=True)
class WatchdogConfig:
    """How the on-VM watchdog reaches the API: Google's, with the VM's token; or the sandbox."""

    python: str = "python3"
    endpoint: str = "https://tpu.googleapis.com"
    iam_endpoint: str = "https://cloudresourcemanager.googleapis.com"
    token: str = "metadata"
    # For ``token="file:PATH"``: the secret to place at PATH on worker 0 (mode 0600) before
    # arming, as a metadata server would serve it; never in the worker's environment.
    token_secret: str | None = None
    retry: float = 30.0
    # When to give up on an API that does not answer (verify/tpu_watchdog.py says why): on
    # Google never before the deadline, and a day of silence past it; in practice, where an API
    # that does not answer is a sandbox switched off, soon after, whatever the deadline.
    give_up_after: float = 86400.0
    give_up_before_deadline: bool = False


def watchdog_job(run_id: str) -> Job:
    return Job(f"watchdog-{run_id}")


DEFAULT_ACCOUNT = "PROJECT_NUMBER-compute@developer.gserviceaccount.com"


def account_notice(project: str, service_account: str | None) -> ev.WatchdogAccount:
    """What the watchdog runs as, said before it is armed (google-behaviour.md "On the VM")."""
    if service_account:
        return ev.WatchdogAccount(
            service_account,
            f"it runs as {service_account}, which needs roles/tpu.admin on {project} to delete "
            "the TPU at the deadline.",
        )
    return ev.WatchdogAccount(
        "",
        phrase(
            "it runs as the project's default Compute Engine service account, which must be "
            "allowed to delete the TPU (organisations created since May 2024 give that account "
            "no roles: there, name an account that has roles/tpu.admin: {0}).",
            Choice("service_account"),
        ),
    )


def not_armed(project: str, service_account: str | None, missing: str) -> Said:
    """Why the watchdog's own check on the VM said no, and what would allow it."""
    member = service_account or DEFAULT_ACCOUNT
    grant = (
        f"not armed: the VM's service account may not delete it ({missing}). Grant "
        "it roles/tpu.admin: gcloud projects add-iam-policy-binding "
        f"{project} --member=serviceAccount:{member} --role=roles/tpu.admin"
    )
    if service_account:
        return grant
    return phrase(
        f"{grant} (PROJECT_NUMBER: gcloud projects describe {project} "
        "--format='value(projectNumber)'); or give the node an account that has the role ({0})",
        Choice("service_account"),
    )


def arm_watchdog(
    transport: Transport,
    resource: Resource,
    deadline: float,
    config: WatchdogConfig,
    emit: Callable[[ev.Event], None],
    service_account: str | None = None,
    idle_s: float | None = None,
) -> bool:
    """Start the watchdog for ``resource`` at ``deadline`` (epoch seconds); True when armed.

    ``service_account`` is the node's account (``--service-account``); None: the default one.
    With ``idle_s`` it also deletes the node once no heartbeat has arrived for that long.
    """
    emit(account_notice(resource.project, service_account))
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
        emit(ev.Watchdog(False, deadline, not_armed(resource.project, service_account, missing)))
        return False
    idle = []
    if idle_s:
        idle = ["--idle-seconds", str(round(idle_s, 1)), "--heartbeat", HEARTBEAT_FILE]
        transport.run(0, shell("touch", HEARTBEAT_FILE), timeout=60)  # the idle time starts now
    start_job(
        transport,
        0,
        watchdog_job(resource.run_id),
        shell(*command, "--deadline", str(round(deadline, 1)), *idle, *_give_up(config)),
    )
    emit(
        ev.Watchdog(
            True,
            deadline,
            f"armed on worker 0: {resource.name} is deleted at the deadline"
            + (f" or after {idle_s / 60:g} minutes without a heartbeat" if idle_s else "")
            + " even if this computer is off",
        )
    )
    return True


def _give_up(config: WatchdogConfig) -> list[str]:
    early = ["--give-up-before-deadline"] if config.give_up_before_deadline else []
    return ["--give-up-after", str(config.give_up_after), *early]
