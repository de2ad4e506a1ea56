"""Starts a user's script on one worker for tpuwizard: ``python tpu_launch.py SCRIPT ARGS...``.

Standard library only at start (JAX is the script's to import); it imports nothing of tpuwizard,
so it can be read, copied and run by hand. What it adds before running SCRIPT as ``__main__``
(its arguments unchanged):

* The join's timeouts. ``jax.distributed.initialize`` waits ``initialization_timeout`` seconds
  (300 by default) for every worker to register, and ends a worker whose heartbeat has been
  missing ``heartbeat_timeout_seconds`` (100 by default). A cold multi-host start can take longer
  than the first, and a long first compile longer than the second, and neither has an environment
  variable, so the launcher wraps ``initialize`` when JAX loads it and gives the values of
  ``TPUWIZARD_INIT_TIMEOUT`` and ``TPUWIZARD_HEARTBEAT_TIMEOUT`` to the parameters of those names
  that this JAX has and the script did not pass itself. (The coordinator's address and port
  come through ``JAX_COORDINATOR_ADDRESS``, which JAX reads itself.)
* A stack on request: ``faulthandler`` is registered on SIGUSR1, writing every thread's Python
  stack to ``TPUWIZARD_JOB_DIR/stack`` (else to stderr), so a worker that hangs can be asked.
* The join's progress: ``TPUWIZARD_JOB_DIR/joining`` is written when ``initialize`` is called and
  ``joined`` when it returns, so a worker that never reached the join can be named.
* A SIGTERM the script handles is written down: a handler the script sets for SIGTERM
  (``signal.signal``) is wrapped so that ``TPUWIZARD_JOB_DIR/sigterm`` is written before it
  runs, as the job's wrapper writes it when it passes a SIGTERM on. Google's Autocheckpoint
  sends its SIGTERM to the script's own process, past the wrapper; a script that saves on it
  and exits 0 did not finish, and this is how tpuwizard knows. A script with no handler dies of
  the signal as before (nothing runs in it to write anything).
* Where JAX cannot find the slice itself (tpuwizard's practice workers: ``TPUWIZARD_COORDINATOR``
  is set), one more JAX cluster type that answers from ``TPUWIZARD_COORDINATOR``,
  ``TPUWIZARD_WORKERS`` and ``TPUWIZARD_WORKER``. Arguments the script passes still win.
"""

import faulthandler
import functools
import importlib.machinery
import inspect
import os
import runpy
import signal
import sys

ENV = os.environ
TIMEOUTS = {
    "initialization_timeout": "TPUWIZARD_INIT_TIMEOUT",
    "heartbeat_timeout_seconds": "TPUWIZARD_HEARTBEAT_TIMEOUT",
}


def job_file(name):
    """A file in this job's folder on the worker (relative to the home), or None."""
    folder = ENV.get("TPUWIZARD_JOB_DIR")
    if not folder:
        return None
    return os.path.join(os.path.expanduser("~"), folder, name)


def mark(name):
    path = job_file(name)
    if path is not None:
        try:
            with open(path, "w") as out:
                out.write("1\n")
        except OSError:
            pass


def noting_sigterm(set_handler):
    """``signal.signal`` that marks the job before the script's own SIGTERM handler runs."""

    @functools.wraps(set_handler)
    def set_noted(signalnum, handler):
        if signalnum == signal.SIGTERM and callable(handler):

            @functools.wraps(handler)
            def noted(signum, frame):
                mark("sigterm")
                return handler(signum, frame)

            noted.script_handler = handler
            previous = set_handler(signalnum, noted)
        else:
            previous = set_handler(signalnum, handler)
        return getattr(previous, "script_handler", previous)

    return set_noted


def noted_handler(get_handler):
    """``signal.getsignal`` answering with the script's own handler, not its wrapper."""

    @functools.wraps(get_handler)
    def get(signalnum):
        found = get_handler(signalnum)
        return getattr(found, "script_handler", found)

    return get


def with_timeouts(initialize):
    """``initialize`` with tpuwizard's timeouts where the caller gave none."""
    try:
        params = inspect.signature(initialize).parameters
    except (TypeError, ValueError):
        params = {}

    @functools.wraps(initialize)
    def wrapped(*args, **kwargs):
        try:
            given = inspect.signature(initialize).bind_partial(*args, **kwargs).arguments
        except TypeError:
            given = kwargs
        for name, variable in TIMEOUTS.items():
            value = ENV.get(variable)
            if value and name in params and name not in given:
                kwargs[name] = int(float(value))
        mark("joining")
        result = initialize(*args, **kwargs)
        mark("joined")
        return result

    return wrapped


def register_sandbox(clusters):
    class TpuwizardSandbox(clusters.ClusterEnv):
        name = "tpuwizard-sandbox"

        @classmethod
        def is_env_present(cls):
            return "TPUWIZARD_COORDINATOR" in ENV

        @classmethod
        def get_coordinator_address(cls, timeout_secs=None, override_coordinator_port=None):
            return ENV["TPUWIZARD_COORDINATOR"]

        @classmethod
        def get_process_count(cls):
            return int(ENV["TPUWIZARD_WORKERS"])

        @classmethod
        def get_process_id(cls):
            return int(ENV["TPUWIZARD_WORKER"])


def wrap_distributed(module):
    module.initialize = with_timeouts(module.initialize)


class WhenJaxLoads:
    """Changes a JAX module right after it runs, before anything imports names from it."""

    def __init__(self, changes):
        self.changes = changes

    def find_spec(self, name, path=None, target=None):
        change = self.changes.pop(name, None)
        if change is None:
            return None
        if not self.changes:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                try:
                    change(module)
                except Exception as err:  # another JAX: the script still runs as it would
                    print(
                        "tpuwizard: could not prepare", name, "for the slice:", err, file=sys.stderr
                    )

            spec.loader.exec_module = exec_module
        return spec


def main():
    stack = job_file("stack")
    # Kept open for the process's life: faulthandler writes to it on each SIGUSR1.
    out = open(stack, "w") if stack is not None else sys.stderr  # noqa: SIM115
    faulthandler.register(signal.SIGUSR1, file=out, all_threads=True)
    signal.signal = noting_sigterm(signal.signal)
    signal.getsignal = noted_handler(signal.getsignal)
    changes = {"jax._src.distributed": wrap_distributed}
    if "TPUWIZARD_COORDINATOR" in ENV:
        changes["jax._src.clusters"] = register_sandbox
    sys.meta_path.insert(0, WhenJaxLoads(changes))
    del sys.argv[0]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
