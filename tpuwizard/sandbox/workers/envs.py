"""Practice workers' shared environments: one per (Python, JAX version), built once per computer.

A practice worker whose JAX is not tpuwizard's own runs it on Python 3.12 (workers/python.py), and
that JAX with its jaxlib, numpy and scipy is about 140 MB of wheels. Installed into each worker's
venv, every practice launch would fetch and unpack them again; so they are installed once per
computer into an environment under this user's cache (``$XDG_CACHE_HOME/tpuwizard/worker-envs/
py3.12-jax0.12.0.1``, or under ``$TPUWIZARD_WORKER_ENVS``), and each worker's venv gets links to
its packages, the way a worker running tpuwizard's own JAX gets links to tpuwizard's (image.py,
tools.py: link_parent_packages). A worker's own packages (``--with``) go in its own venv.

The environment is built aside (``NAME.building-PID``) and renamed into place whole, its marker
file written last, under a lock file: a half-built one is never used, and a second process asking
for it while the first builds waits for it. Its files are read-only afterwards.

Standard library only: workers/tools.py loads it by path (its tools run with ``-I -S``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

BUILD_TIMEOUT_S = 30 * 60  # a first download of ~140 MB on a slow line, then its bytecode

ENVS_ENV = "TPUWIZARD_WORKER_ENVS"
MARKER = "tpuwizard-worker-env.json"
# Downloaded for 0.11.2 and 0.12.0.1 on a fresh machine (jaxlib 83 MiB, scipy 34, numpy 15, jax
# 3; measured 2026-12-02, test_jax_table_drill.py).
ABOUT_MB = 140
# uv's words for an index it cannot reach (no route, DNS, refused, timed out).
UNREACHABLE = ("Failed to fetch", "error sending request", "client error (Connect)")


class BuildFailed(Exception):
    """The environment could not be built; the message says why, in practice's words."""


def envs_folder() -> Path:
    """Where this computer keeps the environments (the user's cache, or $TPUWIZARD_WORKER_ENVS)."""
    named = os.environ.get(ENVS_ENV)
    if named:
        return Path(named).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tpuwizard" / "worker-envs"


def env_name(python_version: str, jax: str) -> str:
    return f"py{python_version}-jax{jax}"


def built_env(folder: Path, python_version: str, jax: str) -> Path | None:
    """The finished environment, or None (missing, or never finished: no marker)."""
    env = folder / env_name(python_version, jax)
    return env if (env / MARKER).is_file() else None


def env_site(env: Path) -> Path:
    """The environment's site-packages folder."""
    return next(env.glob("lib/python3*/site-packages"))


def index_sources(index: dict[str, list[str]], wheels: str | None) -> list[str]:
    """uv's options for the wheel folder first, then this computer's pip index settings."""
    sources = ["--find-links", wheels] if wheels and Path(wheels).is_dir() else []
    sources += ["--index-url", index["index-url"][0]]
    sources += [a for url in index.get("extra-index-url", []) for a in ("--extra-index-url", url)]
    sources += [a for link in index.get("find-links", []) for a in ("--find-links", link)]
    # pip weighs every index's versions; uv by default only the first index holding the name,
    # so a local mirror with an older jax would hide PyPI's newer one.
    return [*sources, "--index-strategy", "unsafe-best-match"]


def unreachable_cause(stderr: str) -> str | None:
    """Why uv could not reach an index, in this computer's terms; None when it reached it."""
    if not any(words in stderr for words in UNREACHABLE):
        return None
    causes = [  # uv's chain of causes ("cause:" now, "Caused by:" in older releases)
        re.split(r"(?:cause|Caused by):", line, maxsplit=1)[1].strip()
        for line in stderr.splitlines()
        if re.match(r"\s*(?:cause|Caused by):", line)
    ]
    cause = next((c for c in reversed(causes) if c), "no answer")
    # uv's "Network is unreachable" would read as a VM's; this is the computer's own.
    return cause.replace("Network is unreachable", "no network route from this computer")


def building_words(jax: str, python_version: str, env: Path, index: str, wheels: str | None) -> str:
    return (
        f"Practice: building the worker environment for jax {jax} on Python {python_version} "
        f"once for this computer: about {ABOUT_MB} MB of wheels from the wheel folder "
        f"{wheels or '(none)'}, uv's cache, else the package index {index}, into {env} (every "
        "later practice worker asking for this version reuses it)."
    )


def build_env(
    folder: Path,
    uv: str,
    python: str,
    python_version: str,
    jax: str,
    index: dict[str, list[str]],
    wheels: str | None,
    say: Callable[[str], None],
    env: dict[str, str] | None = None,
) -> Path:
    """The environment for ``jax`` on ``python``, built first where it is missing (``say`` gets
    one line then). Raises :class:`BuildFailed` when uv cannot build it."""
    found = built_env(folder, python_version, jax)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    name = env_name(python_version, jax)
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building it: wait for it
        found = built_env(folder, python_version, jax)
        if found is not None:
            return found
        target = folder / name
        held = wheels if wheels and Path(wheels).is_dir() else None
        say(building_words(jax, python_version, target, index["index-url"][0], held))
        for stale in [*folder.glob(f"{name}.building-*"), target]:  # a killed build's
            shutil.rmtree(stale, ignore_errors=True)
        building = folder / f"{name}.building-{os.getpid()}"
        try:
            _install(building, uv, python, jax, index, wheels, env)
        except BuildFailed:
            shutil.rmtree(building, ignore_errors=True)
            raise
        _read_only(building)
        building.rename(target)
        return target


def _install(
    building: Path,
    uv: str,
    python: str,
    jax: str,
    index: dict[str, list[str]],
    wheels: str | None,
    env: dict[str, str] | None,
) -> None:
    online = dict(env if env is not None else os.environ)
    online.pop("UV_OFFLINE", None)
    online.update(UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    # Its bytecode compiled now: the files are read-only afterwards, and without it every
    # worker process would compile jax's modules again at import (seconds each).
    install = [uv, "pip", "install", "--quiet", "--compile-bytecode",
               "--python", str(building / "bin" / "python"), f"jax=={jax}", "numpy"]  # fmt: skip
    _run([uv, "venv", "--quiet", "--relocatable", "--python", python, str(building)], online)
    # Offline first: the wheel folder and uv's cache, nothing fetched (uv online would ask the
    # index about every package, even one the wheel folder holds); then the index.
    local = ["--find-links", wheels] if wheels and Path(wheels).is_dir() else []
    done = _run([*install, *local], dict(online, UV_OFFLINE="1"), check=False)
    if done.returncode != 0:
        done = _run([*install, *index_sources(index, wheels)], online, check=False)
    if done.returncode != 0:
        raise BuildFailed(_failure_words(done.stderr, jax, index, wheels))
    (building / MARKER).write_text(json.dumps({"jax": jax, "python": python}) + "\n")


def _run(
    command: list[str], env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise BuildFailed(f"uv could not run ({error})") from None
    if check and done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise BuildFailed(f"uv could not make a venv ({said[-1] if said else 'no reason'})")
    return done


def _failure_words(stderr: str, jax: str, index: dict[str, list[str]], wheels: str | None) -> str:
    cause = unreachable_cause(stderr)
    if cause is not None:
        return (
            f"jax {jax} is not in the wheel folder {wheels or '(none)'}, and the package index "
            f"{index['index-url'][0]} cannot be reached from this computer ({cause})"
        )
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"uv could not install jax {jax} ({said[-1] if said else 'no reason given'})"


def _read_only(env: Path) -> None:
    """Its files read-only: a worker's venv links to them and must never change them. Folders
    stay writable, so that the user can delete the environment and Python can cache bytecode."""
    for root, _, files in os.walk(env):
        for name in files:
            path = Path(root, name)
            if not path.is_symlink():
                mode = path.stat().st_mode
                path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
