"""The Python a practice worker gets when its JAX is not tpuwizard's own: the 3.12 a real VM's
uv provides (gb:56 "`uv venv --python 3.12`, which a real VM downloads").

A practice worker whose JAX is tpuwizard's own runs on tpuwizard's interpreter, with its packages
(image.py): quick, and nothing downloaded. One that asks for another JAX from the table (``--jax
0.12.0.1``, which needs Python >= 3.12) needs a real 3.12 with its own packages. The sandbox never
downloads a Python: it takes one uv finds on this computer without downloading, else one of
pyenv's (uv does not look in pyenv's versions folder, and pyenv's shims answer uv only for the
selected version). None found: the worker stays on tpuwizard's Python, and says so. Looked for
only when a worker asks for another JAX, never at each node's create.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

WORKER_PYTHON = "3.12"  # what bootstrap.py asks uv for on a real VM (MANAGED_PYTHON)


def _reports(python: str, version: str) -> bool:
    """``python`` runs and is CPython ``version`` (3.12: any 3.12.x)."""
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == version


def _uv_finds(uv: str | None, version: str) -> str | None:
    if not uv:
        return None
    env = dict(os.environ, UV_PYTHON_DOWNLOADS="never", UV_OFFLINE="1", UV_NO_PROGRESS="1")
    try:
        done = subprocess.run(
            [uv, "python", "find", "--no-project", version],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and found and _reports(found, version) else None


def _pyenv_versions(version: str) -> list[Path]:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if not root.is_dir():
        return []
    # Newest patch release first: 3.12.10 before 3.12.9.
    found = [
        p / "bin" / f"python{version}"
        for p in root.glob(f"{version}.*")
        if p.name.removeprefix(f"{version}.").isdigit()
    ]
    return sorted(found, key=lambda p: int(p.parent.parent.name.rsplit(".", 1)[1]), reverse=True)


def python_version(python: str) -> str:
    """``python``'s full version (3.12.1), else the version asked of it."""
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return WORKER_PYTHON
    found = done.stdout.strip()
    return found if done.returncode == 0 and found else WORKER_PYTHON


@functools.cache
def find_worker_python(uv: str | None, version: str = WORKER_PYTHON) -> str | None:
    """A Python ``version`` on this computer: ``python3.12`` on PATH, pyenv's, else one uv finds
    without downloading (asked last: uv's search takes seconds where pyenv's shims stand in)."""
    on_path = shutil.which(f"python{version}")
    # pyenv's shims answer only for pyenv's selected version, slowly: its folders are read below.
    quick = [on_path] if on_path and "shims" not in Path(on_path).parts else []
    quick += [str(p) for p in _pyenv_versions(version)]
    return next((p for p in quick if _reports(p, version)), None) or _uv_finds(uv, version)
