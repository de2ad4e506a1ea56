"""Issue 36: a practice worker's JAX other than tpuwizard's is installed once per computer into a
shared environment, built aside and renamed whole under a lock file, read-only afterwards. The
packages here are tiny stand-ins in a local find-links folder (nothing is downloaded), and the
environment's Python is tpuwizard's own (the real 3.12 one: test_course_programs.py)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tests.wheels import make_wheel
from tpuwizard.sandbox.workers import envs as worker_envs
from tpuwizard.sandbox.workers.image import find_uv

PY = "{}.{}".format(*sys.version_info[:2])
JAX = "0.12.0.1"


@pytest.fixture
def wheels(tmp_path) -> Path:
    folder = tmp_path / "wheels"
    make_wheel(folder, "jax", JAX, f"__version__ = {JAX!r}\n", requires=("numpy",))
    make_wheel(folder, "numpy", "9.9", "__version__ = '9.9'\n")
    return folder


def closed_index() -> dict[str, list[str]]:
    return {"index-url": ["http://127.0.0.1:9/simple"]}


def build(folder: Path, wheels: Path | None, said: list[str]) -> Path:
    uv = find_uv()
    assert uv is not None
    return worker_envs.build_env(
        folder, uv, sys.executable, PY, JAX, closed_index(), str(wheels) if wheels else None,
        said.append, dict(os.environ, UV_CACHE_DIR=str(folder.parent / "uv-cache")),
    )  # fmt: skip


def test_the_environment_is_built_once_said_once_and_read_only(tmp_path, wheels):
    folder, said = tmp_path / "envs", list[str]()
    env = build(folder, wheels, said)
    assert env == folder / f"py{PY}-jax{JAX}" and (env / worker_envs.MARKER).is_file()
    (line,) = said
    assert f"building the worker environment for jax {JAX} on Python {PY} once" in line
    assert f"about {worker_envs.ABOUT_MB} MB" in line and str(wheels) in line and str(env) in line
    site = worker_envs.env_site(env)
    assert (site / "jax" / "__init__.py").read_text() == f"__version__ = {JAX!r}\n"
    assert not (site / "jax" / "__init__.py").stat().st_mode & 0o222  # no write bit left
    assert list((site / "jax" / "__pycache__").glob("__init__.*.pyc"))  # compiled once, here
    assert [p.name for p in folder.iterdir() if ".building-" in p.name] == []
    # Every later ask reuses it, saying nothing.
    assert build(folder, wheels, said) == env and len(said) == 1
    assert worker_envs.built_env(folder, PY, JAX) == env


def test_a_torn_build_is_never_used_and_is_built_again(tmp_path, wheels):
    folder = tmp_path / "envs"
    torn = folder / f"py{PY}-jax{JAX}"
    (torn / "lib").mkdir(parents=True)  # no marker: a build that never finished
    (folder / f"py{PY}-jax{JAX}.building-999999").mkdir()  # a killed build's folder
    assert worker_envs.built_env(folder, PY, JAX) is None
    said: list[str] = []
    env = build(folder, wheels, said)
    assert env == torn and (env / worker_envs.MARKER).is_file() and len(said) == 1
    assert sorted(p.name for p in folder.iterdir()) == [env.name, f"{env.name}.lock"]


def test_a_second_builder_waits_on_the_lock_and_takes_the_first_ones(tmp_path, wheels, monkeypatch):
    folder, said = tmp_path / "envs", list[str]()
    folder.mkdir()
    asked: list[int] = []
    real_built_env = worker_envs.built_env

    def counting(*args: object) -> Path | None:
        asked.append(1)
        return real_built_env(*args)  # type: ignore[arg-type]

    results: list[Path] = []
    with open(folder / f"py{PY}-jax{JAX}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first builder, at work
        monkeypatch.setattr(worker_envs, "built_env", counting)
        second = threading.Thread(target=lambda: results.append(build(folder, wheels, said)))
        second.start()
        wait_until(lambda: asked, 30, "the second builder's first look")
        first = folder / f"py{PY}-jax{JAX}"
        first.mkdir()
        worker_envs.seal(first, sys.executable, JAX)  # the first one's, finished
    second.join(timeout=60)
    assert results == [first] and said == []  # it waited, then took the first one's


def test_an_unreachable_index_fails_in_practices_words(tmp_path):
    with pytest.raises(worker_envs.BuildFailed) as failed:
        build(tmp_path / "envs", None, [])
    words = str(failed.value)
    assert f"jax {JAX} is not in the wheel folder (none)" in words
    assert "http://127.0.0.1:9/simple cannot be reached from this computer" in words
    assert "Cloud NAT" not in words and "external" not in words
    assert list((tmp_path / "envs").glob("*.building-*")) == []


def test_an_environment_changed_since_it_was_built_is_built_again_under_the_lock(tmp_path, wheels):
    """Issue 49: the damage a worker's install did (numpy's files rewritten, then a folder of
    them deleted) is seen by the digest of its files, and the next ask builds it again."""
    folder, said = tmp_path / "envs", list[str]()
    env = build(folder, wheels, said)
    numpy = worker_envs.env_site(env) / "numpy" / "__init__.py"
    numpy.chmod(0o644)
    numpy.write_text("__version__ = '9.8'\n")  # rewritten in place: same files, not as built
    assert worker_envs.built_env(folder, PY, JAX) is None
    assert "not as they were" in (worker_envs.damage(env) or "")
    assert build(folder, wheels, said) == env and len(said) == 2
    assert f"the worker environment {env} is built again (its files changed" in said[1]
    assert numpy.read_text() == "__version__ = '9.9'\n"
    assert worker_envs.built_env(folder, PY, JAX) == env
    shutil.rmtree(numpy.parent)  # numpy.libs, deleted through a link
    assert "files then" in (worker_envs.damage(env) or "")
    assert build(folder, wheels, said) == env and len(said) == 3 and numpy.is_file()
    assert [p.name for p in folder.iterdir() if ".building-" in p.name] == []


def test_one_built_before_the_digest_is_kept_where_it_imports_and_built_again_where_not(
    tmp_path, wheels
):
    folder, said = tmp_path / "envs", list[str]()
    env = build(folder, wheels, said)
    marker = env / worker_envs.MARKER
    marker.write_text(json.dumps({"jax": JAX, "python": sys.executable}) + "\n")  # an old one's
    assert worker_envs.built_env(folder, PY, JAX) is None
    first_file = worker_envs.env_site(env) / "jax" / "__init__.py"
    inode = first_file.stat().st_ino
    assert build(folder, wheels, said) == env and len(said) == 1  # imports: kept, not rebuilt
    assert first_file.stat().st_ino == inode and "digest" in json.loads(marker.read_text())
    assert worker_envs.built_env(folder, PY, JAX) == env
    marker.write_text(json.dumps({"jax": JAX, "python": sys.executable}) + "\n")
    shutil.rmtree(worker_envs.env_site(env) / "numpy")  # `import numpy` fails in it
    assert build(folder, wheels, said) == env and len(said) == 2
    assert "built before tpuwizard recorded its files" in said[1]
    assert (worker_envs.env_site(env) / "numpy" / "__init__.py").is_file()


@pytest.mark.parametrize("stand_in", ["file", "link"])
def test_a_file_in_the_environment_s_place_is_replaced_and_no_build_is_left(
    tmp_path, wheels, stand_in
):
    """A file (or a dangling link) where the environment should be: it is replaced by the
    build, and no .building-PID folder (570 MB for the real JAX) stays behind."""
    folder, said = tmp_path / "envs", list[str]()
    folder.mkdir()
    target = folder / f"py{PY}-jax{JAX}"
    if stand_in == "file":
        target.write_text("not an environment\n")
    else:
        target.symlink_to(tmp_path / "nowhere")
    env = build(folder, wheels, said)
    assert env == target and target.is_dir() and not target.is_symlink()
    assert (worker_envs.env_site(env) / "jax" / "__init__.py").is_file()
    assert [p.name for p in folder.iterdir() if ".building-" in p.name] == []


def test_a_build_that_cannot_be_put_in_place_leaves_no_copy_and_names_the_folder(
    tmp_path, wheels, monkeypatch
):
    folder, said = tmp_path / "envs", list[str]()

    def refused(self: Path, to: Path) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "rename", refused)
    with pytest.raises(worker_envs.BuildFailed) as failed:
        build(folder, wheels, said)
    target = folder / f"py{PY}-jax{JAX}"
    assert f"could not be put in place at {target}" in str(failed.value)
    assert f"delete {target} and launch again" in str(failed.value)
    assert [p.name for p in folder.iterdir() if ".building-" in p.name] == []


STAND_IN_UV = """\
#!/bin/sh
# uv as far as the build sees it: a child of its own (a bytecode compiler), then a long wait
sleep 300 &
echo "$$ $!" > "{pids}"
wait
"""

BUILDER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("envs", sys.argv[1])
envs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(envs)
envs.build_env(
    __import__("pathlib").Path(sys.argv[2]), sys.argv[3], sys.executable, "3.12", "0.12.0.1",
    {"index-url": ["http://127.0.0.1:9/simple"]}, None, print,
)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (not yet reaped) has ended too
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_a_sigkilled_builder_takes_uv_and_its_children_with_it(tmp_path):
    """Round 5: a SIGKILLed build left uv and its compile processes running to their end. The
    builder is a process of its own here (as tools.py or the launch is), killed mid-build."""
    import signal
    import subprocess

    pids = tmp_path / "pids"
    uv = tmp_path / "uv"
    uv.write_text(STAND_IN_UV.format(pids=pids))
    uv.chmod(0o755)
    builder = subprocess.Popen(
        [sys.executable, "-c", BUILDER, worker_envs.__file__, str(tmp_path / "envs"), str(uv)],
        stdout=subprocess.DEVNULL,
    )
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, 30, "uv to start")
    stand_in, child = map(int, pids.read_text().split())
    try:
        assert alive(stand_in) and alive(child)
        builder.send_signal(signal.SIGKILL)
        builder.wait()
        wait_until(lambda: not alive(stand_in) and not alive(child), 30, "uv's group to end")
    finally:  # a failure leaves nothing of this test running
        for pid in (stand_in, child):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
