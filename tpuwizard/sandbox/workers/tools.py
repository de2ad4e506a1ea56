"""The tools of the sandbox's worker image: ``python3 -m pip``/``-m venv``, ``uv``, ``curl``.

Run as ``python -I -S workers/tools.py TOOL IMAGE_JSON ARGS...`` by the scripts that
``image.install_image`` writes. Standard library only, so each call starts quickly. Every rule
cites google-behaviour.md ("gb:LINE"); nothing here opens a network connection.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

# gb:55 "`python3 -m venv` can fail because the `python3-venv` package is missing": Ubuntu's text.
NO_VENV = """The virtual environment was not created successfully because ensurepip is not
available.  On Debian/Ubuntu systems, you need to install the python3-venv
package using the following command.

    apt install python3.10-venv

You may need to use sudo with that command.  After installing the python3-venv
package, recreate your virtual environment.
"""
# gb:14 "then the VM has no route to PyPI either": pip's words when no connection can be made.
PIP_NO_ROUTE = (
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object>: Failed to establish a new connection: [Errno 101] Network is "
    "unreachable')': /simple/{name}/\n"
    "ERROR: Could not find a version that satisfies the requirement {name} (from versions: "
    "none)\nERROR: No matching distribution found for {name}\n"
)

# gb:14 the same, in uv's words: what uv prints on a worker that has no route to PyPI. A package
# the sandbox cannot hand over offline fails with them, so the diagnosis is Google's.
UV_NO_ROUTE = (
    "error: Request failed after 3 retries\n"
    "  Caused by: Failed to fetch: `https://pypi.org/simple/{name}/`\n"
    "  Caused by: error sending request for url (https://pypi.org/simple/{name}/)\n"
    "  Caused by: client error (Connect)\n"
    "  Caused by: tcp connect error: Network is unreachable (os error 101)\n"
    "  Caused by: Network is unreachable (os error 101)\n"
)
# The fault bootstrap_fail: uv's words when a wheel cannot be written (a full boot disk).
NO_SPACE = (
    "error: Failed to install: numpy-2.2.6-cp310-cp310-manylinux_2_17_x86_64.whl (numpy==2.2.6)\n"
    "  Caused by: failed to write to file `/home/tpuwizard/.tpuwizard/venv/lib/python3.10/"
    "site-packages/numpy/core/_multiarray_umath.so`: No space left on device (os error 28)\n"
)


def pip(image: dict[str, Any], args: list[str]) -> int:
    """The image's pip for Python 3.10: it can install uv for the user, and nothing else."""
    if args[:1] == ["--version"]:
        print("pip 22.0.2 from /usr/lib/python3/dist-packages/pip (python 3.10)")
        return 0
    if args[:1] != ["install"]:
        sys.stderr.write("sandbox image: only `pip install --user uv` is modelled\n")
        return 1
    names = [a for a in args[1:] if not a.startswith("-")]
    quiet = any(a in ("-q", "--quiet") for a in args)
    if not image["external"]:
        sys.stderr.write(PIP_NO_ROUTE.format(name=names[0] if names else "uv"))
        return 1
    if names == ["uv"] and not image["uv"]:
        sys.stderr.write(
            "ERROR: the sandbox hands workers the uv of tpuwizard's own environment, and it has "
            "none: install it there (pip install uv)\n"
        )
        return 1
    if names != ["uv"] or "--user" not in args:
        # Google's image would download these; the sandbox downloads nothing.
        sys.stderr.write(
            f"ERROR: the sandbox's image installs only uv for the system Python, not {names}\n"
        )
        return 1
    target = Path.home() / ".local" / "bin" / "uv"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        f"#!/bin/bash\nexec {shlex.quote(sys.executable)} -I -S {shlex.quote(__file__)} uv "
        f'{shlex.quote(os.environ["TPUWIZARD_IMAGE"])} "$@"\n'
    )
    target.chmod(0o755)
    if not quiet:
        print("Successfully installed uv")
    return 0


def _managed_python_request(value: str) -> bool:
    """A bare version such as '3.12' asks uv for a managed Python (a download on a real VM)."""
    match = re.fullmatch(r"(?:cpython-)?3\.(\d+)(?:\.\d+)?", value)
    return match is not None and int(match.group(1)) >= 11


def _option(args: list[str], name: str) -> int | None:
    """Index of the value of ``--name VALUE`` or ``--name=VALUE`` in args."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return i + 1
        if arg.startswith(name + "="):
            args[i : i + 1] = [name, arg.partition("=")[2]]
            return i + 1
    return None


LAYER = "tpuwizard-layer.pth"  # in a worker venv's site-packages: the folders below its own


def _normalized(name: str) -> str:
    """A distribution's name as its dist-info folder and uv compare it (PEP 503, then ``_``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def layer_packages(image: dict[str, Any], venv_python: str, sites: list[str] | None = None) -> None:
    """Give the venv tpuwizard's packages (or those of ``sites``: a shared worker environment,
    workers/envs.py) as a layer below its own, as uv's cache would hand them over offline.

    A ``.pth`` line puts each folder on the venv's path after its own site-packages, and each
    ``.dist-info`` gets a stub in the venv: a copy of its METADATA, which is what uv reads to see
    a requirement satisfied, and a RECORD naming only the stub's files. Nothing in the venv
    points into those folders, so uv can never write or delete there: a package the worker
    installs or upgrades (numpy for flax) goes in the venv, ahead of the layer, and uv's
    uninstall of a stub removes the stub alone. A venv is layered once, when it is made; a
    later install into it adds no second version of a package beside the first.
    """
    venv = Path(venv_python).parent.parent
    own_sites = list(venv.glob("lib/python3*/site-packages"))
    if not own_sites or (own_sites[0] / LAYER).exists():
        return
    site = own_sites[0]
    parents = [Path(p) for p in (image["site"] if sites is None else sites) if Path(p).is_dir()]
    held = {_normalized(e.name.split("-")[0]) for e in site.glob("*.dist-info")}
    for parent in parents:
        for entry in sorted(parent.glob("*.dist-info")):
            name = _normalized(entry.name.split("-")[0])
            if name in held or not (entry / "METADATA").is_file():
                continue
            held.add(name)  # one version of each package, the first folder's
            stub = site / entry.name
            stub.mkdir()
            # A copy, never a link: uv replacing or deleting it must not reach the original.
            (stub / "METADATA").write_bytes((entry / "METADATA").read_bytes())
            (stub / "INSTALLER").write_text("tpuwizard-sandbox\n")
            files = ("METADATA", "INSTALLER", "RECORD")
            (stub / "RECORD").write_text("".join(f"{entry.name}/{f},,\n" for f in files))
    # Written last: a venv with it is layered whole.
    (site / LAYER).write_text("".join(f"{parent}\n" for parent in parents))


def uv(image: dict[str, Any], args: list[str]) -> int:
    """The real uv, offline, with tpuwizard's interpreter and packages in place of downloads."""
    env = dict(os.environ, UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    if args[:1] == ["venv"]:
        at = _option(args, "--python")
        if at is not None and _managed_python_request(args[at]):
            # gb:56 a real VM downloads this Python; the sandbox hands over tpuwizard's own (the
            # JAX install below says which Python the worker ends on, in one line).
            args[at] = image["python"]
    elif args[:2] == ["pip", "install"]:
        if image.get("install_fails"):  # the fault bootstrap_fail (sandbox/faults.py)
            sys.stderr.write(NO_SPACE)
            return 2
        at = _option(args, "--python")
        other = other_jax(image, args)
        if at is not None and other:
            return install_other_jax(image, args, args[at], other, env)
        if at is not None:
            layer_packages(image, args[at])
            if pinned_jax(args) is not None:
                say_worker(
                    image["jax"],
                    f"{sys.version.split()[0]} (tpuwizard's own; a TPU VM's uv gives it "
                    f"{_worker_python().WORKER_PYTHON})",
                )
        return uv_install(image, args, env)
    os.execve(image["uv"], [image["uv"], *args], env)
    return 127  # not reached


def pinned_jax(args: list[str]) -> str | None:
    """The jax version an install pins (the bootstrap's ``jax[tpu]==X``), if it pins one."""
    for arg in args:
        pinned = re.fullmatch(r"jax(?:\[[\w,]+\])?==([\w.]+)", arg)
        if pinned:
            return pinned.group(1)
    return None


def other_jax(image: dict[str, Any], args: list[str]) -> str | None:
    """The jax version an install pins, where it is not the one tpuwizard's environment has."""
    pinned = pinned_jax(args)
    return pinned if pinned and image.get("jax") and pinned != image["jax"] else None


def say_worker(jax: str, python: str) -> None:
    """The one line a practice worker says about itself (issue 55.7): its JAX and its Python;
    how the sandbox got them stays out of it."""
    sys.stderr.write(f"sandbox: practice worker: JAX {jax} on Python {python}\n")


def _worker_python() -> Any:
    return _sibling("python")


def _worker_envs() -> Any:
    return _sibling("envs")


def _sibling(name: str) -> Any:
    """A module beside this file (``-I`` leaves this folder off sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def install_other_jax(
    image: dict[str, Any], args: list[str], venv_python: str, version: str, env: dict[str, str]
) -> int:
    """An install pinning another JAX than tpuwizard's: the venv is made again on the Python
    3.12 a real VM's uv provides (gb:56), found on this computer, and gets that JAX's packages
    from this computer's shared worker environment (workers/envs.py), built first where it is
    missing and the worker has a route out; its own packages are installed beside them. With no
    3.12 here, the worker stays on tpuwizard's Python."""
    finder = _worker_python()
    python = finder.find_worker_python(image["uv"])
    own = sys.version.split()[0]
    if python is None:
        say_worker(
            version,
            f"{own} (tpuwizard's own: a TPU VM's uv gives it {finder.WORKER_PYTHON}, which this "
            "computer lacks)",
        )
        return uv_install(image, args, env)
    cache = image.get("uv_cache")
    cached = dict(env, UV_CACHE_DIR=cache) if cache else env
    envs = _worker_envs()
    folder = Path(image.get("worker_envs") or envs.envs_folder())
    shared = envs.built_env(folder, finder.WORKER_PYTHON, version)
    index, wheels = image.get("index"), image.get("wheels")
    if shared is None and image["external"] and index:
        try:
            shared = envs.build_env(
                folder, image["uv"], python, finder.WORKER_PYTHON, version, index, wheels,
                lambda line: sys.stderr.write(line + "\n"), cached,
            )  # fmt: skip
        except envs.BuildFailed as failed:
            sys.stderr.write(
                f"error: practice: {failed}. Put its wheels in the wheel folder, or connect this "
                "computer and try again.\n"
            )
            return 1
    # The environment's packages (``shared``) or, with none, this computer's uv cache: how
    # practice gets them is not what the worker is, so the line says only the latter.
    say_worker(version, f"{finder.python_version(python)}, as on a TPU VM")
    venv = Path(venv_python).parent.parent
    made = subprocess.run(
        [image["uv"], "venv", "--quiet", "--clear", "--python", python, str(venv)],
        env=cached,
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        sys.stderr.write(made.stderr)
        return made.returncode
    # Layered even with no environment (an empty layer): a later install into this venv
    # (--with) must not layer tpuwizard's own packages, of another Python and JAX, below it.
    layer_packages(image, venv_python, [str(envs.env_site(shared))] if shared is not None else [])
    # Offline first: the environment's packages are in place; the worker's own (--with) come
    # from the wheel folder, else its index where it has a route out.
    return uv_install(image, args, cached)


# What follows a worker's offline install (:func:`after_offline`).
OFFLINE_WORKED, ONLINE, NO_ROUTE = "offline-worked", "online", "no-route"


def after_offline(offline: subprocess.CompletedProcess[str], route_out: bool) -> str:
    """What follows uv's offline attempt: nothing where it worked; else, on a worker with a
    route out, the install again online, whatever uv's reason (its words differ with what its
    cache holds: "was not found in the cache" at first, "needs to be downloaded from a
    registry" once the index page is cached), and only that attempt is diagnosed; on a worker
    with none, the failure a worker with no route has (gb:14)."""
    if offline.returncode == 0:
        return OFFLINE_WORKED
    return ONLINE if route_out else NO_ROUTE


def requested(args: list[str]) -> list[str]:
    """The requirements a ``uv pip install`` names: its own arguments and its ``-r`` files'
    lines (options and their values left out)."""
    takes_value = {"--python", "-r", "--requirement", "-c", "--constraint", "--find-links",
                   "-f", "--index-url", "--extra-index-url", "--index-strategy"}  # fmt: skip
    found: list[str] = []
    rest = args[2:] if args[:2] == ["pip", "install"] else args
    for i, arg in enumerate(rest):
        before = rest[i - 1] if i else ""
        if before in ("-r", "--requirement"):
            try:
                lines = Path(arg).read_text().splitlines()
            except OSError:
                continue
            found += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        elif not arg.startswith("-") and before not in takes_value:
            found.append(arg)
    return found


def uv_install(image: dict[str, Any], args: list[str], env: dict[str, str]) -> int:
    """``uv pip install``: offline first, from the sandbox's wheel folder and uv's cache; then,
    where that fails for any reason and the worker has a route out, from the package index this
    computer's pip uses, as a real worker downloads (the wheel folder still first). Both
    attempts name the same sources, so what the online one put in uv's cache the next offline
    one finds. Without a route out, an install offline cannot do fails as it would on a worker
    with no route (gb:14)."""
    wheels = image.get("wheels")
    if wheels and Path(wheels).is_dir():
        args = [*args, "--find-links", wheels]
    index = image.get("index") if image["external"] else None
    sources = _worker_envs().index_sources(index, None) if index else []
    done = subprocess.run([image["uv"], *args, *sources], env=env, capture_output=True, text=True)
    step = after_offline(done, index is not None)
    if step == ONLINE:
        assert index is not None
        return uv_download(image, [*args, *sources], env, index)
    sys.stdout.write(done.stdout)
    if step == OFFLINE_WORKED:
        sys.stderr.write(done.stderr)
        return done.returncode
    names = requested(args) or ["the packages asked for"]
    kept = [line for line in done.stderr.splitlines(True) if line.startswith("Using Python")]
    sys.stderr.write("".join(kept) + UV_NO_ROUTE.format(name=names[0]))
    sys.stderr.write(
        f"sandbox: {', '.join(names)} could not be installed from tpuwizard's environment and "
        f"the wheel folder {wheels or '(none)'} alone; a real worker would download from PyPI\n"
    )
    return done.returncode


def uv_download(
    image: dict[str, Any], args: list[str], env: dict[str, str], index: dict[str, list[str]]
) -> int:
    """The install again, online (``args`` name the wheel folder and ``index``, this computer's
    pip settings). Where the index cannot be reached, the words are practice's: where it
    looked, and what to do here, never a network fix for a Google VM (uv's own network words
    are left out for that reason)."""
    online = {k: v for k, v in env.items() if k != "UV_OFFLINE"}
    done = subprocess.run([image["uv"], *args], env=online, capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    cause = _worker_envs().unreachable_cause(done.stderr)
    if done.returncode == 0 or cause is None:
        sys.stderr.write(done.stderr)
        return done.returncode
    wheels = image.get("wheels") or "(none)"
    listed = ", ".join(requested(args)) or "the packages asked for"
    sys.stderr.write(
        f"error: practice: {listed} could not be installed from the wheel folder {wheels} "
        f"and uv's cache alone, and the package index {index['index-url'][0]} cannot be "
        f"reached from this computer ({cause}). Put the wheels in the wheel folder, or connect "
        "this computer and try again.\n"
    )
    return done.returncode


def curl(image: dict[str, Any], args: list[str]) -> int:
    """curl and wget: the sandbox never downloads; without an external address, no route."""
    if not image["external"]:
        sys.stderr.write("curl: (7) Failed to connect: Network is unreachable\n")
        return 7
    sys.stderr.write("curl: (6) the sandbox's workers download nothing (no route outside)\n")
    return 6


def venv(image: dict[str, Any], args: list[str]) -> int:
    sys.stderr.write(NO_VENV)
    return 1


TOOLS = {"pip": pip, "pip3": pip, "uv": uv, "curl": curl, "venv": venv, "ensurepip": venv}


def main(argv: list[str]) -> int:
    tool, config, *args = argv
    os.environ["TPUWIZARD_IMAGE"] = config
    image = json.loads(Path(config).read_text())
    return TOOLS[tool](image, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
