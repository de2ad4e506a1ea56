"""The sandbox's TPU runtime image: what a worker finds on its PATH.

gb:52-56 "TPU runtime images ... ship Python 3.10 ... `python3 -m venv` can fail because the
`python3-venv` package is missing ... uv can create a venv with a newer, uv-managed Python (`uv
venv --python 3.12`), which a real VM downloads." So a sandbox worker's ``python3`` is a stand-in
that reports 3.10 and has no ``venv`` module, and no ``uv`` is on its PATH until ``pip install
--user uv`` puts one in ``~/.local/bin``. That uv is the real uv from tpuwizard's environment,
told to work offline first: where a VM would download a managed Python, it is handed
tpuwizard's own interpreter, and where it would download packages, it finds tpuwizard's own,
and the wheels in the sandbox's wheel folder (``$TPUWIZARD_SANDBOX_WHEELS``, else ``wheels/``
in the sandbox's home). A package in neither is downloaded as a real worker would download it,
since this computer is online where a VM would be: from the package index this computer's pip
uses (``pip config list``: index-url, extra-index-url, find-links; PyPI when none is set), the
wheel folder still first. This is the one place practice reaches past loopback; the sandbox's
APIs stay on 127.0.0.1. gb:14 "then the VM has no route to PyPI either": on a node created
without external addresses, pip, uv and curl fail as they would with no route.

The image lives beside the node's worker homes (``<node>/image``) and goes with the node.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tpuwizard.sandbox.workers import envs as worker_envs
from tpuwizard.sandbox.workers import tools as worker_tools

IMAGE_PYTHON_VERSION = "3.10.12"  # gb:53 (Ubuntu 22.04's python3)
WHEELS_ENV = "TPUWIZARD_SANDBOX_WHEELS"


PYPI = "https://pypi.org/simple"
# The pip settings a practice worker's downloads follow, and the sections pip reads them from
# for an install (later ones win, as they do for pip: the environment last).
INDEX_KEYS = ("index-url", "extra-index-url", "find-links")
INDEX_SECTIONS = ("global", "install", ":env:")


@functools.cache
def index_settings() -> dict[str, list[str]]:
    """Where this computer's pip installs from: ``pip config list``'s index-url (PyPI when
    unset), extra-index-url and find-links, each a list (pip separates several by spaces)."""
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):  # no pip here: PyPI, as pip's default
        listed = ""
    return parse_pip_config(listed)


def parse_pip_config(listed: str) -> dict[str, list[str]]:
    """``pip config list``'s lines (``global.index-url='...'``) as the install settings."""
    settings: dict[str, list[str]] = {"index-url": [PYPI]}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if section in INDEX_SECTIONS and name in INDEX_KEYS:
            settings[name] = value.strip().strip("'\"").split()
    if not settings["index-url"]:  # set to nothing: pip's own default
        settings["index-url"] = [PYPI]
    return settings


def wheel_folder(sandbox_home: Path) -> Path:
    """Where the sandbox's workers find packages beyond tpuwizard's own (read at each boot)."""
    named = os.environ.get(WHEELS_ENV)
    return Path(named).expanduser() if named else sandbox_home / "wheels"


def image_folder(node_folder: Path) -> Path:
    return node_folder / "image"


def find_uv() -> str | None:
    """The uv binary tpuwizard's environment carries (the ``uv`` package), else one on PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def own_jax() -> str | None:
    """The jax in tpuwizard's environment, which the image hands workers without a download."""
    from importlib import metadata

    try:
        return metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None


def uv_cache_dir() -> str:
    """This computer's uv cache (as ``uv cache dir`` finds it), not a worker home's."""
    named = os.environ.get("UV_CACHE_DIR")
    if named:
        return named
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "uv")


def install_image(
    node_folder: Path, external: bool, wheels: Path | None = None, install_fails: bool = False
) -> None:
    """Write the image's ``bin`` (python3, curl, wget) and the settings its tools read;
    ``wheels``: the local folder its uv finds added packages in; ``install_fails``: its uv
    installs nothing (the fault bootstrap_fail)."""
    folder = image_folder(node_folder)
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    paths = sysconfig.get_paths()
    config = folder / "image.json"
    config.write_text(
        json.dumps(
            {
                "python": sys.executable,
                "uv": find_uv(),
                "external": external,
                "site": list(dict.fromkeys([paths["purelib"], paths["platlib"]])),
                "python_version": IMAGE_PYTHON_VERSION,
                "wheels": str(wheels) if wheels is not None else None,
                "index": index_settings() if external else None,
                # A worker asking for another JAX (--jax) gets a Python 3.12 and downloads
                # (workers/python.py): into this computer's uv cache, so once is enough.
                "jax": own_jax(),
                "uv_cache": uv_cache_dir(),
                # ... and installs it once per computer, shared by every worker asking for it.
                "worker_envs": str(worker_envs.envs_folder()),
                "install_fails": install_fails,
            }
        )
    )
    # -I -S: the tools are standard library only, and skipping site makes each call quick.
    tools = f"{shlex.quote(sys.executable)} -I -S {shlex.quote(worker_tools.__file__)}"
    conf = shlex.quote(str(config))
    scripts = {
        # Only what a bootstrap touches is modelled (--version, -m venv, -m pip); anything else
        # runs on tpuwizard's interpreter, which the stand-in does not hide.
        "python3": f"""#!/bin/bash
case "${{1:-}}" in
  --version|-V) echo "Python {IMAGE_PYTHON_VERSION}"; exit 0 ;;
  -m) case "${{2:-}}" in
        venv|ensurepip|pip|pip3) mod="$2"; shift 2; exec {tools} "$mod" {conf} "$@" ;;
      esac ;;
esac
exec {shlex.quote(sys.executable)} "$@"
""",
        "curl": f'#!/bin/bash\nexec {tools} curl {conf} "$@"\n',
        "wget": f'#!/bin/bash\nexec {tools} curl {conf} "$@"\n',
    }
    for name, text in scripts.items():
        path = bin_dir / name
        path.write_text(text)
        path.chmod(0o755)


def worker_path(node_folder: Path) -> str:
    """The PATH a worker's commands see: the image first, then this machine's tools without uv.

    tpuwizard's own environment (its uv, its python) is left out, and so is any folder holding a
    uv, so that uv reaches a worker only through the image's ``pip install --user uv``.
    """
    own = Path(sys.prefix, "bin").resolve()
    kept = [str(image_folder(node_folder) / "bin")]
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not entry or "~" in entry:
            continue
        folder = Path(entry)
        if folder.resolve() == own or (folder / "uv").exists():
            continue
        kept.append(entry)
    return os.pathsep.join(dict.fromkeys(kept))
