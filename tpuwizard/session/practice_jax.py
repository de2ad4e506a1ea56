"""Practice's worker JAX where this computer has no Python 3.12: the newest version of the table
tpuwizard's own Python can install, said in one line (issue 36).

A version of the table that needs Python 3.12 runs in practice on a Python 3.12 found on this
computer (sandbox/worker_python.py). Without one, the worker could only fail to install it after
the node was made; so the practice launch runs the newest version this Python can install, and
the line says which, why, and how to get a 3.12. A real VM is never affected: its uv provides 3.12.
"""

from __future__ import annotations

import sys

from tpuwizard.core.plan.jax_versions import TABLE, find


def practice_jax(asked: str | None) -> tuple[str | None, str | None]:
    """The version a practice worker runs for ``asked`` (None: the default), and the line that
    says why it is another one; (asked, None) when it can run as asked."""
    entry = find(asked) if asked else None
    here = sys.version_info[:2]
    if entry is None or here >= entry.min_python:
        return asked, None
    from tpuwizard.sandbox.image import find_uv
    from tpuwizard.sandbox.worker_python import WORKER_PYTHON, find_worker_python

    if find_worker_python(find_uv()) is not None:
        return asked, None
    fits = [v for v in TABLE if v.min_python <= here]
    if not fits:
        return asked, None  # nothing fits either: uv's own words say why, after the line there
    instead = fits[-1].version
    own = ".".join(map(str, here))
    return instead, (
        f"Practice: jax {asked} needs Python {entry.python.removeprefix('>=')} or newer, and no "
        f"Python {WORKER_PYTHON} is on this computer (`uv python install {WORKER_PYTHON}` or "
        f"pyenv installs one): the practice worker runs jax {instead} on tpuwizard's Python "
        f"{own} instead. A real TPU VM gets jax {asked} on its uv's Python {WORKER_PYTHON}."
    )
