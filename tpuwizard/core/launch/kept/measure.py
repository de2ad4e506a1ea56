"""``fit --program FILE --measure --node NAME``: the measurement run on a kept node.

As a ``run`` does, the program's folder is copied (what changed) and a job runs in the node's venv
on its worker, streamed; beside it goes the measuring worker itself
(:mod:`tpuwizard.core.plan.program_measure` and the two modules it needs, plain Python, into
``~/.tpuwizard/measure``), since the node's venv has JAX but not tpuwizard. The job says what it
sees and what it measured in the worker's marked lines; every other line is the program's own
and is streamed as a script's line. The node's compile cache serves it as it serves a run.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpuwizard.core.cancel import Cancelled, CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.workers.compile_cache import cache_env, cache_exports
from tpuwizard.core.launch.workers.jobs import run_on_workers, script_env, stop_on_workers
from tpuwizard.core.launch.workers.script_pass import copy_folder
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.program_at_hand import MARK
from tpuwizard.core.remote.jobs import Job
from tpuwizard.core.remote.sync import WORK_DIR, WORK_PYTHON, LocalFolder
from tpuwizard.core.remote.transports import REMOTE_DIR, Raw, Transport, shell

KIT_DIR = f"{REMOTE_DIR}/measure"  # under the worker's home, beside the venv
# The measuring worker and what it imports: stdlib and JAX only (tests hold this).
KIT_MODULES = ("core/untrusted.py", "core/plan/program_worker.py", "core/plan/program_measure.py")
KIT_PACKAGES = ("__init__.py", "core/__init__.py", "core/plan/__init__.py")


def kit_files() -> dict[str, bytes]:
    """The files of the measuring worker, by their path under :data:`KIT_DIR`; the packages'
    own ``__init__`` files go empty (tpuwizard's would import nothing the worker needs)."""
    root = Path(__file__).resolve().parents[3]  # the tpuwizard package
    files = {f"tpuwizard/{rel}": b"" for rel in KIT_PACKAGES}
    files.update({f"tpuwizard/{rel}": (root / rel).read_bytes() for rel in KIT_MODULES})
    return files


@dataclass(frozen=True)
class NodeMeasure:
    """One measurement of the program's step on a kept node."""

    program: Path  # the local file; its folder is copied as a run's is
    function: str
    mesh: list[tuple[str, int | None]]
    steps: int
    run_id: str
    slice: catalog.Slice
    expect: str  # "tpu", or "cpu" on a practice node

    def command(self) -> str:
        request = {
            "program": self.program.name,
            "function": self.function,
            "mesh": self.mesh,
            "steps": self.steps,
        }
        return (
            f"{cache_exports()} "
            + shell("cd", WORK_DIR, Raw("&&"))
            + f' PYTHONPATH="$HOME"/{shlex.quote(KIT_DIR)} '
            + shell(WORK_PYTHON, "-m", "tpuwizard.core.plan.program_measure", json.dumps(request))
        )

    def env(self) -> dict[str, str]:
        return {**script_env(self.expect, self.slice, self.run_id), **cache_env()}


def measure_on_node(
    transport: Transport,
    measure: NodeMeasure,
    folder: LocalFolder,
    emit: Callable[[ev.Event], None],
    cancel: CancelToken,
) -> tuple[dict[str, Any], int]:
    """Copy the program's folder and the measuring worker, run it on the node's one worker,
    streamed; returns what the worker said (``at_hand``, then ``measured`` or ``problem``) and
    the job's exit code. A set ``cancel`` ends the job (never the node) and raises
    :class:`Cancelled`."""
    transport.cancel = cancel
    copy_folder(transport, folder, emit)
    for rel, data in kit_files().items():
        transport.upload(0, data, f"{KIT_DIR}/{rel}", mode="644")
    said: dict[str, Any] = {}

    def line(worker: int, text: str) -> None:
        if text.startswith(MARK):
            said.update(json.loads(text[len(MARK) :]))
        else:
            emit(ev.ScriptLine(worker, text, 1))

    job = Job(f"measure-{measure.run_id}")
    try:
        code = run_on_workers(transport, job, measure.command(), measure.env(), line, cancel)
    except Cancelled:
        stop_on_workers(transport, job)  # the measurement, not the node
        raise
    return said, code
