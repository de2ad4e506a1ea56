"""Issue 49: a practice worker's own packages (``--with``) never change this computer's shared
worker environment. Before, a worker's venv held links into it, and a second install (flax, then
matplotlib) had uv "reinstall" numpy through them: the shared files were rewritten, then deleted,
and every later practice launch failed its import check. Here the environment is one of
hand-made wheels under the test's own folder (never the suite's), built with tpuwizard's Python
standing in for 3.12; the installs go through the sandbox image's uv as a worker's do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.wheels import make_wheel
from tpuwizard.sandbox.workers import envs as worker_envs
from tpuwizard.sandbox.workers import image
from tpuwizard.sandbox.workers import tools as worker_tools

PY = "{}.{}".format(*sys.version_info[:2])
JAX = "0.12.0.1"


@pytest.fixture
def worker(tmp_path, monkeypatch):
    """A worker's image (tpuwizard's own packages as its site, as install_image writes it), a
    shared environment for jax JAX built from the wheel folder, and the worker's venv's Python."""
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "jax", JAX, f"__version__ = {JAX!r}\n", requires=("numpy",))
    make_wheel(wheels, "numpy", "9.9", "__version__ = '9.9'\n")
    make_wheel(wheels, "flaxlike", "1.0", "import numpy\n", requires=("numpy", "jax"))
    make_wheel(wheels, "plotlike", "1.0", "import numpy\n", requires=("numpy",))
    envs = tmp_path / "worker-envs"
    monkeypatch.setenv(worker_envs.ENVS_ENV, str(envs))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    node = tmp_path / "node"
    image.install_image(node, external=False, wheels=wheels)
    config = image.image_folder(node) / "image.json"
    settings = json.loads(config.read_text())
    uv = settings["uv"]
    assert uv is not None
    shared = worker_envs.build_env(
        envs, uv, sys.executable, PY, JAX, {"index-url": ["http://127.0.0.1:9/simple"]},
        str(wheels), lambda line: None,
    )  # fmt: skip
    # Released after the environment was built: a package that needs a newer numpy.
    make_wheel(wheels, "numpy", "10.0", "__version__ = '10.0'\n")
    make_wheel(wheels, "newplot", "1.0", "import numpy\n", requires=("numpy>=10",))
    # The Python 3.12 a worker asking for another JAX gets: tpuwizard's own stands in.
    finder = SimpleNamespace(
        WORKER_PYTHON=PY,
        find_worker_python=lambda uv: sys.executable,
        python_version=lambda python: sys.version.split()[0],
    )
    monkeypatch.setattr(worker_tools, "_worker_python", lambda: finder)
    venv = tmp_path / "home" / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    return SimpleNamespace(image=settings, shared=shared, python=str(venv / "bin" / "python"))


def install(worker, *args: str) -> int:
    return worker_tools.uv(worker.image, ["pip", "install", "--python", worker.python, *args])


def files_of(env: Path) -> dict[str, tuple[int, int, int]]:
    """Every file of ``env``: its size, time and inode (a file replaced reads as changed)."""
    found = {}
    for root, _, files in os.walk(env):
        for name in files:
            info = os.lstat(os.path.join(root, name))
            found[os.path.relpath(os.path.join(root, name), env)] = (
                info.st_size,
                info.st_mtime_ns,
                info.st_ino,
            )
    return found


def worker_says(worker, code: str) -> str:
    done = subprocess.run([worker.python, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_two_installs_in_a_row_leave_the_shared_environment_as_it_was(worker, tmp_path, capfd):
    assert install(worker, f"jax=={JAX}", "numpy") == 0  # the bootstrap's
    before = files_of(worker.shared)
    held = tmp_path / "held.txt"
    held.write_text(f"jax=={JAX}\n")  # what packages.install_commands holds
    for package in ("flaxlike", "plotlike"):  # `run --with flax`, then `run --with matplotlib`
        (tmp_path / "added.txt").write_text(package + "\n")
        assert install(worker, "-r", str(tmp_path / "added.txt"), "-c", str(held)) == 0
    said = capfd.readouterr().err
    assert "Failed to uninstall" not in said and "error:" not in said, said
    assert files_of(worker.shared) == before
    assert worker_envs.damage(worker.shared) is None
    assert worker_envs.built_env(worker.shared.parent, PY, JAX) == worker.shared
    # The worker imports them all, one version of each: the shared environment's, and none of
    # tpuwizard's own beside them (the receipt's versions line reads these).
    versions = worker_says(
        worker,
        "import numpy, jax, flaxlike, plotlike\n"
        "from importlib import metadata as m\n"
        "print(m.version('jax'), m.version('numpy'), numpy.__file__)",
    )
    assert versions == f"{JAX} 9.9 {worker_envs.env_site(worker.shared) / 'numpy' / '__init__.py'}"
    site = next(Path(worker.python).parent.parent.glob("lib/python3*/site-packages"))
    stubs = sorted(p.name for p in site.glob("*.dist-info"))
    assert stubs == [
        "flaxlike-1.0.dist-info",
        f"jax-{JAX}.dist-info",
        "numpy-9.9.dist-info",
        "plotlike-1.0.dist-info",
    ]
    assert not any(p.is_symlink() for p in site.rglob("*"))  # nothing points into it


def test_a_package_needing_a_newer_numpy_gets_it_in_the_workers_venv_only(worker, tmp_path):
    assert install(worker, f"jax=={JAX}", "numpy") == 0
    before = files_of(worker.shared)
    assert install(worker, "newplot") == 0  # needs numpy>=10: uv upgrades it, as on a VM
    assert files_of(worker.shared) == before
    numpy = worker_says(worker, "import numpy; print(numpy.__version__, numpy.__file__)")
    assert numpy.startswith("10.0 ") and str(worker.shared) not in numpy
    site = next(Path(worker.python).parent.parent.glob("lib/python3*/site-packages"))
    assert not (site / "numpy-9.9.dist-info").exists()  # its stub went, the original stays
    assert (worker_envs.env_site(worker.shared) / "numpy-9.9.dist-info" / "RECORD").is_file()


def test_tpuwizards_own_packages_are_a_layer_too(worker, tmp_path):
    """A worker on tpuwizard's own JAX gets tpuwizard's environment the same way: an install
    into its venv changes nothing there (this test's own Python runs on it)."""
    own = image.own_jax()
    assert own is not None
    venv = tmp_path / "own-venv"
    uv = worker.image["uv"]
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    args = ["pip", "install", "--python", python, f"jax=={own}", "numpy"]
    assert worker_tools.uv(worker.image, args) == 0
    site = next(venv.glob("lib/python3*/site-packages"))
    layer = (site / worker_tools.LAYER).read_text().split()
    assert layer == worker.image["site"]
    assert not any(p.is_symlink() for p in site.iterdir())
    assert worker_tools.uv(worker.image, ["pip", "install", "--python", python, "plotlike"]) == 0
    done = subprocess.run(
        [python, "-c", "import jax, plotlike; print(jax.__version__)"],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == own, done.stderr
