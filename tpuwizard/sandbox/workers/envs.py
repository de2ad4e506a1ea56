"""Practice workers' shared environments: one per (Python, JAX version), built once per computer.

A practice worker whose JAX is not tpuwizard's own runs it on Python 3.12 (workers/python.py), and
that JAX with its jaxlib, numpy and scipy is about 140 MB of wheels. Installed into each worker's
venv, every practice launch would fetch and unpack them again; so they are installed once per
computer into an environment under this user's cache (``$XDG_CACHE_HOME/tpuwizard/worker-envs/
py3.12-jax0.12.0.1``, or under ``$TPUWIZARD_WORKER_ENVS``), and each worker's venv gets them as a
layer below its own packages (worker_tools.layer_packages): a ``.pth`` line puts the
environment's site-packages on its path, and a stub of each package's metadata tells uv they are
installed. Nothing in the worker's venv points into the environment's folders, so a worker's own
packages (``--with``), upgrades included, are installed in the worker's venv and never change it.

The environment is built aside (``NAME.building-PID``) and renamed into place whole, its marker
file written last, under a lock file: a half-built one is never used, and a second process asking
for it while the first builds waits for it. Its files are read-only afterwards (which stops
nothing run as root), and the marker records a digest of its file list (path, size, time):
an environment whose files changed since (a tool that wrote into it, a folder deleted) is not
used, and the next process asking for it builds it again under the lock. One built before the
digest existed is used once ``import numpy, jax`` works in it, and its digest recorded then.

uv runs in a process group of its own, ended whole when its builder dies (:func:`_in_own_group`).

Standard library only: workers/tools.py loads it by path (its tools run with ``-I -S``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
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
    """The finished environment, unchanged since it was built; else None (missing, never
    finished, or changed since: :func:`damage` says how)."""
    env = folder / env_name(python_version, jax)
    return env if damage(env) is None else None


def damage(env: Path) -> str | None:
    """Why ``env`` cannot be used as it is, in a few words; None when its files are as built."""
    try:
        marker = json.loads((env / MARKER).read_text())
    except FileNotFoundError:
        return "it was never finished"
    except (OSError, ValueError):
        return "its marker file cannot be read"
    if not isinstance(marker, dict) or "digest" not in marker:
        return "it was built before tpuwizard recorded its files"
    count, digest = _manifest(env)
    if digest == marker["digest"]:
        return None
    then = marker.get("files")
    return (
        f"its files changed since it was built: {then} files then, {count} now"
        if then != count
        else f"its files changed since it was built: the same {count} files, not as they were"
    )


def seal(env: Path, python: str, jax: str) -> None:
    """Write the marker: the environment is finished, with the digest of its files as they are
    now (written aside and renamed, so a reader never sees half of it)."""
    count, digest = _manifest(env)
    text = json.dumps({"jax": jax, "python": python, "files": count, "digest": digest}) + "\n"
    aside = env / f"{MARKER}.{os.getpid()}"
    aside.write_text(text)
    aside.rename(env / MARKER)


def _manifest(env: Path) -> tuple[int, str]:
    """The number of the environment's files and a digest of their paths, sizes and times.
    Bytecode is left out (Python may add some for a module not compiled at build), and so is the
    marker. About 3,200 files for jax 0.12.0.1 with scipy: tens of milliseconds."""
    digest = hashlib.sha256()
    count = 0
    for root, folders, files in os.walk(env):
        folders[:] = sorted(f for f in folders if f != "__pycache__")
        for name in sorted(files):
            if root == str(env) and name.startswith(MARKER):
                continue
            path = os.path.join(root, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue  # gone between the listing and the look: it reads as changed
            count += 1
            relative = os.path.relpath(path, env)
            digest.update(f"{relative}\t{info.st_size}\t{info.st_mtime_ns}\n".encode())
    return count, digest.hexdigest()


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


def building_words(
    jax: str,
    python_version: str,
    env: Path,
    index: str,
    wheels: str | None,
    again: str | None = None,
) -> str:
    """The line said as a build starts; ``again``: why the one in place is not used."""
    start = (
        f"Practice: the worker environment {env} is built again ({again}): jax {jax} on Python "
        f"{python_version}, "
        if again
        else f"Practice: building the worker environment for jax {jax} on Python "
        f"{python_version} once for this computer: "
    )
    return start + (
        f"about {ABOUT_MB} MB of wheels from the wheel folder {wheels or '(none)'}, uv's cache, "
        f"else the package index {index}, into {env} (every later practice worker asking for "
        "this version reuses it)."
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
    """The environment for ``jax`` on ``python``, built first where it is missing or changed
    since it was built (``say`` gets one line then). Raises :class:`BuildFailed` when uv cannot
    build it."""
    found = built_env(folder, python_version, jax)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    name = env_name(python_version, jax)
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building it: wait for it
        target = folder / name
        why = damage(target)
        if why is None:
            return target
        if why.startswith("it was built before") and _imports(target):
            seal(target, python, jax)  # one built by an earlier tpuwizard, and whole
            return target
        held = wheels if wheels and Path(wheels).is_dir() else None
        again = None if why == "it was never finished" or not target.exists() else why
        say(building_words(jax, python_version, target, index["index-url"][0], held, again))
        for stale in [*folder.glob(f"{name}.building-*"), target]:  # a killed build's
            _remove(stale)
        building = folder / f"{name}.building-{os.getpid()}"
        try:
            _install(building, uv, python, jax, index, wheels, env)
            _read_only(building)
            seal(building, python, jax)  # the digest of its files as they will stay
            building.rename(target)
        except BuildFailed:
            shutil.rmtree(building, ignore_errors=True)
            raise
        except OSError as err:  # never a half-built copy (hundreds of MB) left behind
            shutil.rmtree(building, ignore_errors=True)
            raise BuildFailed(
                f"the worker environment could not be put in place at {target} ({err}): "
                f"delete {target} and launch again"
            ) from None
        return target


def _remove(path: Path) -> None:
    """A stale build or a damaged environment gone: a folder with its files, or a file or link
    standing in its place (rmtree refuses those, and the rename over it would fail)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def _imports(env: Path) -> bool:
    """``import numpy, jax`` works with the environment's Python (what a worker needs first)."""
    try:
        done = subprocess.run(
            [str(env / "bin" / "python"), "-c", "import numpy, jax"],
            env=dict(os.environ, JAX_PLATFORMS="cpu"),
            capture_output=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


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
    # worker process would compile jax's modules again at import (seconds each). Copied, not
    # hard-linked from uv's cache (uv's default): its files are its own, so making them
    # read-only leaves the cache's alone, and a file changed in it is not changed in the cache
    # that would build it again.
    install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--link-mode", "copy",
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


def _run(
    command: list[str], env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    try:
        done = _in_own_group(command, env)
    except (OSError, subprocess.SubprocessError) as error:
        raise BuildFailed(f"uv could not run ({error})") from None
    if check and done.returncode != 0:
        said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise BuildFailed(f"uv could not make a venv ({said[-1] if said else 'no reason'})")
    return done


# Beside each uv, a guard holding the read end of a pipe whose write end only the builder holds:
# when the pipe closes without "done" (the builder died, SIGKILL included, or was stopped), it
# ends uv's whole process group, the bytecode compilers uv starts included (they ran on for
# minutes after a SIGKILLed build: reliability round 5).
_GUARD = """\
import os, signal, sys
if sys.stdin.buffer.read() != b"done":
    try:
        os.killpg(int(sys.argv[1]), signal.SIGKILL)
    except OSError:
        pass
"""


def _in_own_group(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``command`` run as the leader of a process group of its own, which ends whole when the
    builder dies or stops, or when the build's time runs out."""
    import signal
    import sys

    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    read_end, write_end = os.pipe()
    try:
        guard = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GUARD, str(proc.pid)],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a stop signal to the builder's group does not end it
        )
    except OSError:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    try:
        out, err = proc.communicate(timeout=BUILD_TIMEOUT_S)
    except BaseException:  # its time ran out, or the builder is stopping: the group goes now
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        os.write(write_end, b"done")  # uv's group has ended: the guard ends, killing nothing
        os.close(write_end)
        with contextlib.suppress(subprocess.TimeoutExpired):
            guard.wait(timeout=30)
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


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
