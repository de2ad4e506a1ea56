"""Issue 36: a practice worker asking for another JAX than tpuwizard's (``--jax``) runs the Python
a real worker runs, 3.12 (found on this computer, never downloaded), with its own packages; with
none found it stays on tpuwizard's Python. Either way one line says what the worker is, its JAX
and its Python (issue 55.7). The packages here are tiny
stand-ins served from a local index (the real jax 0.12.0.1 was run by hand: docs/guides/
packages.md), so nothing is downloaded."""

from __future__ import annotations

import functools
import http.server
import os
import shlex
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.integration.test_worker_image import markers, worker
from tests.wheels import make_wheel
from tpuwizard.core.remote.bootstrap import (
    VENV,
    VERSIONS_SNIPPET,
    bootstrap_script,
    sandbox_plan,
)
from tpuwizard.core.remote.packages import install_script
from tpuwizard.sandbox.serving import STOP_POLL_S
from tpuwizard.sandbox.workers import envs as worker_envs
from tpuwizard.sandbox.workers import image
from tpuwizard.sandbox.workers import tools as worker_tools
from tpuwizard.sandbox.workers.python import find_worker_python, python_version

OTHER = "0.12.0.1"


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """A package index on loopback with stand-ins for jax OTHER and numpy, named as this
    computer's pip index (the sandbox's workers download from it)."""
    served = tmp_path / "index"
    for name, version, requires in (
        ("jax", OTHER, ()),
        ("numpy", "9.9", ()),
        ("flaxlike", "1.0", ("numpy", "jax")),
        ("plotlike", "1.0", ("numpy",)),
    ):
        wheel = make_wheel(served, name, version, f"__version__ = {version!r}\n", requires)
        listing = served / "simple" / name
        listing.mkdir(parents=True)
        link = f'<a href="../../{wheel.name}">{wheel.name}</a>'
        (listing / "index.html").write_text(f"<html><body>{link}</body></html>\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = {"poll_interval": STOP_POLL_S}  # its shutdown() waits that long, not 0.5 s
    threading.Thread(target=server.serve_forever, kwargs=serving, daemon=True).start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_address[1]}/simple")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # not this user's cache
    # Not this computer's shared environments (the suite's holds the real jax OTHER).
    monkeypatch.setenv(worker_envs.ENVS_ENV, str(tmp_path / "worker-envs"))
    image.index_settings.cache_clear()
    yield
    server.shutdown()
    image.index_settings.cache_clear()


def test_another_jax_gets_a_python_312_venv_with_its_own_packages(sandbox, local_index):
    python = find_worker_python(image.find_uv())
    if python is None:  # CI's image has pyenv's 3.12; a computer without one says so (below)
        pytest.skip("no Python 3.12 on this computer")
    vm = worker(sandbox)
    plan = sandbox_plan().with_jax(OTHER)
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(plan))}")
    assert result.code == 0, result.stdout + result.stderr
    # The worker environment is built once, said once, and the venv links to it.
    assert result.stderr.count(f"building the worker environment for jax {OTHER}") == 1
    # Issue 55.7: one line says what the worker is, none how practice got it.
    said = [line for line in result.stderr.splitlines() if line.startswith("sandbox: ")]
    assert said == [
        f"sandbox: practice worker: JAX {OTHER} on Python {python_version(python)}, as on a TPU VM"
    ]
    shared = worker_envs.built_env(Path(os.environ[worker_envs.ENVS_ENV]), "3.12", OTHER)
    assert shared is not None
    versions = markers(result.stdout)[-1]
    assert versions["jax"] == OTHER and versions["numpy"] == "9.9"  # its own, not tpuwizard's
    site = f"{VENV}/lib/python3.12/site-packages"
    layer = vm.run(0, f"cat {site}/{worker_tools.LAYER}").stdout.split()
    assert layer == [str(worker_envs.env_site(shared))]  # below its own, not a copy
    assert vm.run(0, f"test -e {site}/jax").code != 0
    assert versions["python"].startswith("3.12.") and versions["requested"] == f"jax=={OTHER}"
    # A next worker venv reuses it: nothing built or fetched again.
    assert vm.run(0, f"rm -rf {VENV}").code == 0
    again = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(plan))}")
    assert again.code == 0 and "building the worker environment" not in again.stderr
    assert markers(again.stdout)[-1]["jax"] == OTHER
    # Issue 49: two installs in a row (`run --with flax`, then `run --with matplotlib`) go in
    # the worker's venv; the shared environment stays as it was built, and the versions line
    # names its jax and numpy, not tpuwizard's own beside them.
    for package in ("flaxlike", "plotlike"):
        added = vm.run(0, f"bash -c {shlex.quote(install_script([package]))}")
        assert added.code == 0 and "Failed to uninstall" not in added.stdout, added.stdout
    assert worker_envs.damage(shared) is None
    report = vm.run(0, f"{VENV}/bin/python -c {shlex.quote(VERSIONS_SNIPPET)} x flaxlike plotlike")
    versions = markers(report.stdout)[-1]
    assert (versions["jax"], versions["numpy"]) == (OTHER, "9.9")
    assert versions["packages"] == {"flaxlike": "1.0", "plotlike": "1.0"}


def test_tpuwizards_own_jax_runs_on_its_python_with_its_packages(sandbox):
    """--jax 0.10.2 (tpuwizard's own here): the worker's venv is tpuwizard's Python with links
    to tpuwizard's packages, no Python 3.12 and no worker environment (every run; the whole
    launch with it turns in test_jax_table_drill.py)."""
    own = image.own_jax()
    vm = worker(sandbox)
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(sandbox_plan().with_jax(own)))}")
    assert result.code == 0, result.stdout + result.stderr
    assert "worker environment" not in result.stderr and "download" not in result.stderr
    python = sys.version.split()[0]
    said = [line for line in result.stderr.splitlines() if line.startswith("sandbox: ")]
    assert said == [
        f"sandbox: practice worker: JAX {own} on Python {python} (tpuwizard's own; a TPU VM's "
        "uv gives it 3.12)"
    ]
    versions = markers(result.stdout)[-1]
    assert versions["jax"] == own and versions["python"] == sys.version.split()[0]


def test_tpuwizards_own_jax_stays_on_its_python_with_nothing_downloaded(tmp_path):
    own = {"jax": "0.10.2"}
    assert worker_tools.other_jax(own, ["pip", "install", "jax==0.10.2", "numpy"]) is None
    assert worker_tools.other_jax(own, ["pip", "install", "jax[tpu]==0.12.0.1"]) == "0.12.0.1"
    assert worker_tools.other_jax(own, ["pip", "install", "optax"]) is None


def test_with_no_python_312_the_worker_says_so_and_stays_on_tpuwizards(monkeypatch, capsys):
    stand_in = SimpleNamespace(WORKER_PYTHON="3.12", find_worker_python=lambda uv: None)
    monkeypatch.setattr(worker_tools, "_worker_python", lambda: stand_in)
    installed = []
    monkeypatch.setattr(worker_tools, "uv_install", lambda *a: installed.append(a) or 0)
    image_json = {"uv": "uv", "jax": "0.10.2", "external": True}
    args = ["pip", "install", "--python", "v/bin/python", "jax==0.12.0.1"]
    assert worker_tools.install_other_jax(image_json, args, "v/bin/python", OTHER, {}) == 0
    said = capsys.readouterr().err.splitlines()
    own = sys.version.split()[0]
    assert said == [
        f"sandbox: practice worker: JAX {OTHER} on Python {own} (tpuwizard's own: a TPU VM's uv "
        "gives it 3.12, which this computer lacks)"
    ]
    assert installed  # the install goes on, where uv says why it cannot


def test_pyenv_versions_are_found_newest_patch_first(tmp_path, monkeypatch):
    for patch in ("9", "10", "x"):
        folder = tmp_path / "versions" / f"3.77.{patch}" / "bin"
        folder.mkdir(parents=True)
        python = folder / "python3.77"
        python.write_text("#!/bin/sh\necho 3.77\n")
        python.chmod(0o755)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    find_worker_python.cache_clear()
    try:
        found = find_worker_python(None, "3.77")
        assert found == str(tmp_path / "versions" / "3.77.10" / "bin" / "python3.77")
        assert find_worker_python(None, "3.78") is None
    finally:
        find_worker_python.cache_clear()
    assert Path(found).is_file()
