"""A user's ``jax.distributed.initialize()`` where JAX cannot find the slice by itself.

On a Cloud TPU slice, ``jax.distributed.initialize()`` with no arguments finds the coordinator,
the process count and this process's id in the TPU metadata; tpuwizard names the coordinator
itself (worker 0's internal address and a port the slice's firewall opens, through
``JAX_COORDINATOR_ADDRESS``, which JAX reads) because the port JAX picks since 0.8.1 is not one
of them. The sandbox's workers are CPU processes with no such metadata, so for them (a runtime
with ``explicit_coordinator``) the launcher (verify/tpu_launch.py, through which every script
starts) registers one more JAX cluster type, found only when ``TPUWIZARD_COORDINATOR`` is set.
JAX is not imported for it: the launcher changes JAX's modules as the script's own import loads
them. Arguments the script passes to ``initialize`` still win, as they do on a TPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from tpuwizard.core.deadlines import HEARTBEAT_TIMEOUT_S, INIT_TIMEOUT_S
from tpuwizard.core.launch.workers.multihost import free_port
from tpuwizard.core.remote.transports import REMOTE_DIR, shell

COORDINATOR_ENV = "TPUWIZARD_COORDINATOR"

LAUNCHER_FILENAME = "tpu_launch.py"
# Beside the verifier, under the worker's home.
LAUNCHER_PATH = f"{REMOTE_DIR}/{LAUNCHER_FILENAME}"
# A port the firewall rule Google makes for a TPU slice opens (tcp 8470, 8471, 8474, 8476,
# 11211). Since JAX 0.8.1 a bare initialize() on Cloud TPU picks 8482, which that rule does not
# open, so on a network without an allow-internal rule the join hangs (jax-ml/jax issue 35905;
# its workaround is worker 0's internal address and 8476).
SLICE_PORT = 8476


def launcher_source() -> str:
    """The launcher (verify/tpu_launch.py, standard library only), uploaded beside the verifier."""
    return resources.files("tpuwizard_verify").joinpath(LAUNCHER_FILENAME).read_text("utf-8")


def coordinator_for(endpoints: Sequence[str], explicit: bool) -> str | None:
    """Worker 0's address and a free port, where JAX needs to be told (the sandbox's workers
    are processes on this machine, so a port free here is free there)."""
    if not explicit:
        return None
    return f"{endpoints[0] if endpoints else '127.0.0.1'}:{free_port()}"


def slice_coordinator(internal_addresses: Sequence[str], vms: int) -> str | None:
    """``JAX_COORDINATOR_ADDRESS`` for a multi-host slice of the TPU API or Compute Engine:
    worker 0's internal address and a port the slice's firewall rule opens; None for one VM or
    where worker 0's internal address is not known (JAX then picks its own)."""
    if vms < 2 or not internal_addresses or not internal_addresses[0]:
        return None
    return f"{internal_addresses[0]}:{SLICE_PORT}"


@dataclass(frozen=True)
class JoinTimeouts:
    """What the launcher gives ``jax.distributed.initialize`` (``--join-timeout``,
    ``--heartbeat-timeout``), in seconds."""

    init_s: int = INIT_TIMEOUT_S
    heartbeat_s: int = HEARTBEAT_TIMEOUT_S

    @classmethod
    def of(cls, init_s: int | None, heartbeat_s: int | None) -> JoinTimeouts:
        """The options' values (--join-timeout, --heartbeat-timeout), else the defaults."""
        return cls(init_s or INIT_TIMEOUT_S, heartbeat_s or HEARTBEAT_TIMEOUT_S)

    def env(self) -> dict[str, str]:
        return {
            "TPUWIZARD_INIT_TIMEOUT": str(self.init_s),
            "TPUWIZARD_HEARTBEAT_TIMEOUT": str(self.heartbeat_s),
        }


def join_env(
    worker: int, workers: int, coordinator: str | None, slice_address: str | None = None
) -> dict[str, str]:
    """What a worker's script needs to join the slice: the sandbox's coordinator where JAX
    cannot find it, or worker 0's address and an open port (``slice_address``) on a slice."""
    env = {"TPUWIZARD_WORKER": str(worker), "TPUWIZARD_WORKERS": str(workers)}
    if coordinator is not None:
        env[COORDINATOR_ENV] = coordinator
    elif slice_address is not None:
        env["JAX_COORDINATOR_ADDRESS"] = slice_address
    return env


def script_command(
    python: str, script: str, args: Sequence[str], launcher: str | None = None
) -> str:
    """The shell words that run ``script`` with ``args``, through ``launcher`` (the path of
    verify/tpu_launch.py on the worker) where given; the script's own arguments unchanged."""
    if launcher is None:
        return shell(python, "-u", script, *args)
    return shell(python, "-u", launcher, script, *args)
