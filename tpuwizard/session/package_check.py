"""The package check before create (core/remote/package_check.py), for the worker the plan gets.

A real VM: ``uv pip compile`` of the pinned ``jax[tpu]`` and the packages for the worker's venv,
Python 3.12 (bootstrap.py's MANAGED_PYTHON, which its uv provides on the VM) on
x86_64 Linux with glibc 2.35 (the TPU runtime images are Ubuntu 22.04 on x86_64 hosts,
google-behaviour.md), from PyPI as the worker's uv installs. Practice: a dry run of the
worker's install beside the packages a practice worker gets (this computer's shared worker
environment for that JAX, or tpuwizard's own where that JAX is its own), from the sandbox's
wheel folder and this computer's pip index, as the practice worker's uv installs (and from the
same uv cache). Where that worker environment is not built yet, the check cannot run here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tpuwizard.core.remote.package_check import PackageCheck, Verdict, resolve

if TYPE_CHECKING:
    from tpuwizard.core.launch.plan.parts import Workload

VM_PYTHON = "3.12"
VM_PLATFORM = "x86_64-manylinux_2_35"


def check_plan_packages(workload: Workload, practice: bool) -> PackageCheck:
    """Resolve ``workload``'s added packages beside its JAX for its worker (nothing to do
    without packages: no uv is run)."""
    return check_packages([spec.text for spec in workload.packages], workload.jax, practice)


def check_packages(specs: list[str], jax: str | None, practice: bool) -> PackageCheck:
    """Resolve ``specs`` beside ``jax`` (None: the table's default) for a worker: a launch's
    before create, a kept node's (``run --with``) before anything is copied to it."""
    from tpuwizard.core.plan.jax_versions import DEFAULT
    from tpuwizard.sandbox.workers.image import find_uv

    if not specs:
        return PackageCheck(Verdict.FITS)
    uv = find_uv()
    if uv is None:
        return PackageCheck(Verdict.UNCHECKED, "no uv on this computer to resolve them with")
    jax = jax or DEFAULT.version
    if not practice:
        compile_for_vm = [uv, "pip", "compile", "--python-version", VM_PYTHON,
                          "--python-platform", VM_PLATFORM, "--no-header", "--quiet",
                          "--default-index", "https://pypi.org/simple"]  # fmt: skip
        return resolve(lambda listed: [*compile_for_vm, listed], [f"jax[tpu]=={jax}", *specs])
    found = _practice_layer(jax)
    if found is None:
        return PackageCheck(
            Verdict.UNCHECKED,
            f"the practice worker's environment for jax {jax} is built at its first launch",
        )
    with tempfile.TemporaryDirectory(prefix="tpuwizard-check-") as folder:
        venv = _layered_venv(uv, *found, Path(folder))
        if venv is None:
            return PackageCheck(Verdict.UNCHECKED, "uv could not make a venv to resolve them in")
        return resolve(
            lambda listed: _practice_command(uv, venv, listed),
            [f"jax=={jax}", *specs],
        )


def _practice_layer(jax: str) -> tuple[str, list[str]] | None:
    """The Python a practice worker for ``jax`` runs on, and the site folders whose packages it
    gets below its own (None: that environment is not built yet)."""
    from tpuwizard.sandbox.workers import envs as worker_envs
    from tpuwizard.sandbox.workers.image import own_jax
    from tpuwizard.sandbox.workers.python import WORKER_PYTHON

    if own_jax() == jax:
        paths = sysconfig.get_paths()
        return sys.executable, list(dict.fromkeys([paths["purelib"], paths["platlib"]]))
    env = worker_envs.built_env(worker_envs.envs_folder(), WORKER_PYTHON, jax)
    if env is None:
        return None
    return str(env / "bin" / "python"), [str(worker_envs.env_site(env))]


def _layered_venv(uv: str, python: str, sites: list[str], folder: Path) -> str | None:
    """A venv as a practice worker's is made: its packages a layer of ``sites`` (stubs of their
    metadata, nothing written there), so the dry run sees what the worker's install sees."""
    from tpuwizard.sandbox.workers import tools as worker_tools

    venv = folder / "venv"
    made = subprocess.run(
        [uv, "venv", "--quiet", "--python", python, str(venv)],
        env=dict(os.environ, UV_PYTHON_DOWNLOADS="never"),
        capture_output=True,
    )
    if made.returncode != 0:
        return None
    venv_python = str(venv / "bin" / "python")
    worker_tools.layer_packages({}, venv_python, sites)
    return venv_python


def _practice_command(uv: str, python: str, listed: str) -> list[str]:
    from tpuwizard.core import paths
    from tpuwizard.sandbox.workers import envs as worker_envs
    from tpuwizard.sandbox.workers.image import index_settings, uv_cache_dir, wheel_folder

    wheels = wheel_folder(paths.state_dir() / "sandbox")  # as the practice cloud's
    sources = worker_envs.index_sources(index_settings(), str(wheels))
    return [uv, "pip", "install", "--dry-run", "--quiet", "--python", python, "-r", listed,
            "--cache-dir", uv_cache_dir(), *sources]  # fmt: skip


def package_refusal(
    found: PackageCheck, specs: list[str], untouched: str = "Nothing was created."
) -> str | None:
    """Why the packages are refused before create (uv's reason), or None; ``untouched``: what
    the refusal spared (a kept node's run: nothing copied to it)."""
    if found.verdict is not Verdict.REFUSED:
        return None
    return (
        f"The packages asked for ({', '.join(specs)}) cannot be installed on the worker beside "
        f"its pinned JAX: uv says: {found.why}. {untouched} Check each name on pypi.org "
        "(a package's name can differ from the module you import: orbax is orbax-checkpoint), "
        "or ask for a version that works with that JAX (NAME==VERSION), or leave it out."
    )


def package_note(found: PackageCheck, specs: list[str], when: str = "create") -> str | None:
    """The line said where the check could not run (the launch goes on), or None; ``when``:
    what the check comes before (a kept node's run: "the run")."""
    if found.verdict is not Verdict.UNCHECKED:
        return None
    return (
        f"The packages asked for ({', '.join(specs)}) could not be checked before {when} "
        f"({found.why}): the worker installs them after {when}, and says there if one cannot "
        "be installed."
    )
