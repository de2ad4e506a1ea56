"""A user's ``jax.distributed.initialize()`` where JAX cannot find the slice by itself.

On a Cloud TPU slice, ``jax.distributed.initialize()`` with no arguments finds the coordinator,
the process count and this process's id in the TPU metadata. The sandbox's workers are CPU
processes with no such metadata, so for them (a runtime with ``explicit_coordinator``) the script
starts through :data:`LAUNCHER`: it registers one more JAX cluster type, found only when
``TPUWIZARD_COORDINATOR`` is set, that answers from ``TPUWIZARD_COORDINATOR``,
``TPUWIZARD_WORKERS`` and ``TPUWIZARD_WORKER``, and then runs the script as ``__main__``. JAX is
not imported for it: the cluster type is added when the script's own import of JAX loads its
cluster module. Arguments the script passes to ``initialize`` still win, as they do on a TPU.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpuwizard.core.launch.workers.multihost import free_port
from tpuwizard.core.remote.transports import shell

COORDINATOR_ENV = "TPUWIZARD_COORDINATOR"

LAUNCHER = """
import importlib.machinery, os, runpy, sys

def _register(clusters):
    env = os.environ

    class TpuwizardSandbox(clusters.ClusterEnv):
        name = "tpuwizard-sandbox"

        @classmethod
        def is_env_present(cls):
            return "TPUWIZARD_COORDINATOR" in env

        @classmethod
        def get_coordinator_address(cls, timeout_secs=None, override_coordinator_port=None):
            return env["TPUWIZARD_COORDINATOR"]

        @classmethod
        def get_process_count(cls):
            return int(env["TPUWIZARD_WORKERS"])

        @classmethod
        def get_process_id(cls):
            return int(env["TPUWIZARD_WORKER"])


class _WhenJaxLoadsItsClusters:
    def find_spec(self, name, path=None, target=None):
        if name != "jax._src.clusters":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                try:
                    _register(module)
                except Exception as err:  # another JAX: initialize() then says what it lacks
                    print("tpuwizard: cannot describe the sandbox's slice to JAX:", err)

            spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _WhenJaxLoadsItsClusters())
del sys.argv[0]
sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def coordinator_for(endpoints: Sequence[str], explicit: bool) -> str | None:
    """Worker 0's address and a free port, where JAX needs to be told (the sandbox's workers
    are processes on this machine, so a port free here is free there)."""
    if not explicit:
        return None
    return f"{endpoints[0] if endpoints else '127.0.0.1'}:{free_port()}"


def join_env(worker: int, workers: int, coordinator: str | None) -> dict[str, str]:
    """What a worker's script needs to join the slice (nothing where JAX finds it itself)."""
    env = {"TPUWIZARD_WORKER": str(worker), "TPUWIZARD_WORKERS": str(workers)}
    if coordinator is not None:
        env[COORDINATOR_ENV] = coordinator
    return env


def script_command(python: str, script: str, args: Sequence[str], coordinator: str | None) -> str:
    """The shell words that run ``script`` with ``args``, through the launcher where needed."""
    if coordinator is None:
        return shell(python, "-u", script, *args)
    return shell(python, "-u", "-c", LAUNCHER, script, *args)
