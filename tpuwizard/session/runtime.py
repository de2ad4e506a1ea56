"""Assembling a launch Runtime: the real cloud over SSH, or the practice sandbox."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Any

from tpuwizard.core import paths
from tpuwizard.core.cloud import backends
from tpuwizard.core.cloud.backends import COMPUTE
from tpuwizard.core.cloud.endpoint import TOKEN_ENV
from tpuwizard.core.cloud.oslogin import LoginChoice, LoginKey, OsLoginKeys
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.workers.watchdog import WatchdogConfig
from tpuwizard.core.remote.bootstrap import BootstrapPlan, sandbox_plan
from tpuwizard.core.remote.reach import check_reachable
from tpuwizard.core.remote.ssh_keys import ensure_key, host_key_aliases
from tpuwizard.core.remote.transports import (
    REMOTE_DIR,
    GcloudTransport,
    LocalTransport,
    SshTransport,
    Transport,
)
from tpuwizard.session.ledgers import ledger_for
from tpuwizard.session.login import OsLoginAsk, choose_login, forget_unless_used
from tpuwizard.session.practice import sandbox as practice
from tpuwizard.session.practice.worker_jax import practice_jax

REMOTE_USER = "tpuwizard"


def sandbox_worker_homes(cloud: Any, node: NodeInfo) -> list[Path]:
    """Where the sandbox keeps this node's workers: the server says, since they live under its
    home, which need not be ours (one `sandbox serve` can serve two TPUWIZARD_HOMEs)."""
    from google.auth.transport.requests import AuthorizedSession

    if cloud.backend == COMPUTE:
        # A multi-host slice is a MIG (named as the node), as is the course's Route 2B (one VM
        # by a resize request: a node of parts); a single VM an instance.
        mig = len(node.endpoints) > 1 or bool(node.parts)
        kind = "instanceGroupManagers" if mig else "instances"
        where = f"projects/{cloud.project}/zones/{node.zone}/{kind}/{node.name}"
    else:
        where = cloud.node_path(node.zone, node.name)
    url = f"{cloud.endpoint}/sandbox/v1/{where}:workers"
    response = AuthorizedSession(cloud.credentials).get(url, timeout=cloud.timeout)
    if response.status_code >= 400:
        from google.api_core import exceptions

        raise exceptions.from_http_response(response)
    homes = [Path(h) for h in response.json()["homes"]]
    if len(homes) != len(node.endpoints):
        raise RemoteError(f"the sandbox lists {len(homes)} workers for {node.name}")
    return homes


def with_login_key(
    runtime: Runtime, choice: LoginChoice, imported: tuple[LoginKey, OsLoginKeys] | None
) -> Runtime:
    """The runtime records how it logs in, and deletes the imported key once nothing of the
    launch is left (and nothing else recorded logs in with it)."""
    runtime.login = choice
    if imported is not None:
        key, keys = imported
        ledger = runtime.ledger
        runtime.login_key = key.fingerprint
        runtime.forget_login_key = lambda: forget_unless_used(ledger, key, keys)
    return runtime


def build_runtime(
    cloud: Any,
    is_practice: bool,
    transport: str = "ssh",
    os_login: OsLoginAsk | None = None,
    account: str | None = None,
) -> Runtime:
    """How a launch on ``cloud`` (TpuCloud or ComputeCloud: its endpoint and credentials are
    read in practice) reaches its workers and where it records what it makes. With
    ``os_login`` (OS Login is on, tpuwizard's own SSH): its key is in ``account``'s OS Login
    profile (the caller's by default) until then, imported where it is not, and SSH logs in as
    the POSIX user that answers (:func:`~tpuwizard.session.login.choose_login`)."""
    if is_practice:
        return _practice_runtime(cloud, transport, os_login, account)
    return _real_runtime(cloud, transport, os_login, account)


def _practice_runtime(
    cloud: Any, transport: str, os_login: OsLoginAsk | None, account: str | None
) -> Runtime:
    """The sandbox's: its workers over loopback SSH where an OpenSSH server is paired, else a
    local shell; CPU JAX; the watchdog as a local process."""
    from tpuwizard.sandbox.workers.chip import STAND_IN_FILES

    state = paths.state_dir()
    known_hosts = state / "ssh" / "known_hosts"
    port = practice.ssh_port()
    key, pub = ensure_key(state) if port else (None, "")
    choice, imported = choose_login(
        cloud, True, transport, pub, getpass.getuser(), os_login, account
    )
    user = choice.username or getpass.getuser()
    sandbox_token = os.environ.get(TOKEN_ENV, "")

    def make_sandbox(node: NodeInfo) -> Transport:
        from tpuwizard.sandbox.workers.image import worker_path

        homes = sandbox_worker_homes(cloud, node)
        # The workers run the sandbox's stand-in of Google's image (Python 3.10, no uv).
        image_path = worker_path(homes[0].parent)
        if port and key is not None:
            return SshTransport(
                check_reachable(node, port),
                user,
                key,
                known_hosts,
                port,
                homes=[str(h) for h in homes],
                host_key_aliases=host_key_aliases(node.uid, len(node.endpoints)),
                path=image_path,
            )
        # The local shell stands in for SSH to a worker's external address: a worker
        # without one is as unreachable from here as it would be from a laptop.
        check_reachable(node, None)
        return LocalTransport(homes, image_path)

    return with_login_key(
        Runtime(
            cloud,
            ledger_for(True),
            make_sandbox,
            sandbox_plan(),
            expect="cpu",
            chip_files=STAND_IN_FILES,  # a practice worker's chip is a file in its home
            practice=True,
            explicit_coordinator=True,
            join_timeout=30,
            # The watchdog runs as a local process; the sandbox's token reaches it in a file
            # on worker 0, as a VM's token comes from its metadata server, not in its env.
            watchdog=WatchdogConfig(
                python=sys.executable,
                endpoint=cloud.endpoint,
                iam_endpoint=cloud.endpoint,
                token=f"file:{REMOTE_DIR}/metadata-token" if sandbox_token else "none",
                token_secret=sandbox_token or None,
                retry=0.5,
                # No answer from the sandbox for this long: it was switched off, and its VMs
                # with it (a hand-over to a lasting sandbox takes seconds, not minutes).
                give_up_after=120.0,
                give_up_before_deadline=True,
            ),
            ssh_metadata={"ssh-keys": f"{user}:{pub}"} if pub else {},
            poll=0.25,
            reachable_timeout=30,
            owner=paths.owner_label(),
            worker_jax=practice_jax,
        ),
        choice,
        imported,
    )


def _real_runtime(
    cloud: Any, transport: str, os_login: OsLoginAsk | None, account: str | None
) -> Runtime:
    """Google's: tpuwizard's own SSH to the workers' addresses (or gcloud's), TPU JAX."""
    state = paths.state_dir()
    known_hosts = state / "ssh" / "known_hosts"
    key, pub = ensure_key(state)
    choice, imported = choose_login(cloud, False, transport, pub, REMOTE_USER, os_login, account)
    remote_user = choice.username or REMOTE_USER

    def make_real(node: NodeInfo) -> Transport:
        if transport == backends.Transport.GCLOUD:
            return GcloudTransport(
                node.name,
                node.zone,
                cloud.project,
                len(node.endpoints),
                through_iap=bool(node.internal_only),
            )
        hosts = check_reachable(node, 22)  # fails fast where no address can answer
        aliases = host_key_aliases(node.uid, len(node.endpoints))
        return SshTransport(hosts, remote_user, Path(key), known_hosts, host_key_aliases=aliases)

    runtime = Runtime(
        cloud,
        ledger_for(False),
        make_real,
        BootstrapPlan(),
        expect="tpu",
        ssh_metadata={"ssh-keys": f"{REMOTE_USER}:{pub}"},
        owner=paths.owner_label(),
    )
    return with_login_key(runtime, choice, imported)
