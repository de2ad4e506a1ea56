"""Practice's worker JAX: the version asked for (the table's default when none is) on a Python
3.12 worker, its packages in this computer's shared worker environment; where that cannot be had,
the newest version of the table tpuwizard's own Python can install, said in one line (issue 36).

A version of the table that needs Python 3.12 runs in practice on a Python 3.12 found on this
computer (sandbox/workers/python.py), with its packages installed once per computer
(sandbox/workers/envs.py), built here before the workers' bootstrap, one line saying so the first
time. Without a 3.12, or where the environment cannot be built (its wheels in no wheel folder,
the package index out of reach), the worker could only fail to install it after the node was
made; so the practice launch runs the newest version this Python can install, and the line says
which, why, and what to do. A real VM is never affected: its uv provides 3.12 and downloads.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE, find


def practice_jax(
    asked: str | None, say: Callable[[str], None] = lambda line: None
) -> tuple[str | None, str | None]:
    """The version a practice worker runs for ``asked`` (None: the default), and the line that
    says why it is another one; (asked, None) when it can run as asked. ``say`` gets the line
    that the worker environment is being built, before it is."""
    entry = find(asked or DEFAULT.version)
    here = sys.version_info[:2]
    if entry is None or here >= entry.min_python:
        return asked, None
    from tpuwizard.sandbox.workers.image import find_uv
    from tpuwizard.sandbox.workers.python import WORKER_PYTHON, find_worker_python

    uv = find_uv()
    python = find_worker_python(uv)
    own = ".".join(map(str, here))
    fits = [v for v in TABLE if v.min_python <= here]
    if not fits:
        return asked, None  # nothing fits either: uv's own words say why, on the worker
    instead = fits[-1].version
    real_vm = f"A real TPU VM gets jax {entry.version} on its uv's Python {WORKER_PYTHON}."
    if python is None:
        return instead, (
            f"Practice: jax {entry.version} needs Python {entry.python.removeprefix('>=')} or "
            f"newer, and no Python {WORKER_PYTHON} is on this computer (`uv python install "
            f"{WORKER_PYTHON}` or pyenv installs one): the practice worker runs jax {instead} on "
            f"tpuwizard's Python {own} instead. {real_vm}"
        )
    problem = _build(uv, python, entry.version, say)
    if problem is None:
        return asked, None
    return instead, (
        f"Practice: the worker environment for jax {entry.version} on Python {WORKER_PYTHON} "
        f"could not be built: {problem}. The practice worker runs jax {instead} on tpuwizard's "
        f"Python {own} instead; put the wheels in the wheel folder, or connect this computer, "
        f"and launch again for jax {entry.version}. {real_vm}"
    )


def _build(uv: str | None, python: str, version: str, say: Callable[[str], None]) -> str | None:
    """Build (once per computer) the shared environment for ``version``; why not, or None."""
    from tpuwizard.core import paths
    from tpuwizard.sandbox.workers import envs as worker_envs
    from tpuwizard.sandbox.workers.image import index_settings, wheel_folder
    from tpuwizard.sandbox.workers.python import WORKER_PYTHON

    folder = worker_envs.envs_folder()
    if worker_envs.built_env(folder, WORKER_PYTHON, version) is not None:
        return None
    if uv is None:
        return "no uv in tpuwizard's environment (pip install uv)"
    wheels = wheel_folder(paths.state_dir() / "sandbox")
    try:
        worker_envs.build_env(
            folder, uv, python, WORKER_PYTHON, version, index_settings(), str(wheels), say
        )
    except worker_envs.BuildFailed as failed:
        return str(failed)
    return None
