"""Issue 36: where this computer has no Python 3.12, a practice worker asked for a JAX that needs
one runs the newest version of the table tpuwizard's own Python can install, and one line says
so before its bootstrap; with a 3.12, or on a real VM, the plan's version is installed."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace

import pytest

from tests.conftest import CLOSED_INDEX
from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.launch_state import LaunchContext, LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.lifecycle.part_inputs import worker_input
from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE
from tpuwizard.sandbox.workers import envs as worker_envs
from tpuwizard.sandbox.workers import image
from tpuwizard.session.practice import worker_jax as chooser

NEEDS_312 = next(v.version for v in reversed(TABLE) if v.min_python > sys.version_info[:2])
FITS_HERE = [v.version for v in TABLE if v.min_python <= sys.version_info[:2]][-1]


@pytest.fixture
def no_python_312(monkeypatch):
    monkeypatch.setattr("tpuwizard.sandbox.workers.python.find_worker_python", lambda uv: None)


def test_without_python_312_practice_runs_the_newest_version_this_python_installs(no_python_312):
    version, said = chooser.practice_jax(NEEDS_312)
    assert version == FITS_HERE and said is not None
    assert f"jax {NEEDS_312} needs Python 3.12 or newer" in said
    assert f"runs jax {FITS_HERE} on tpuwizard's Python" in said
    assert "uv python install 3.12" in said
    # The default (the table's newest) falls back the same way; a version this Python installs
    # runs as asked, with nothing said.
    version, said = chooser.practice_jax(None)
    assert version == FITS_HERE and f"jax {DEFAULT.version} needs Python 3.12" in (said or "")
    assert chooser.practice_jax(FITS_HERE) == (FITS_HERE, None)


def test_with_a_python_312_and_its_environment_practice_runs_the_version_asked_for(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(
        "tpuwizard.sandbox.workers.python.find_worker_python", lambda uv: "/opt/py312/bin/python"
    )
    monkeypatch.setenv(worker_envs.ENVS_ENV, str(tmp_path / "envs"))
    for version in (NEEDS_312, DEFAULT.version):
        built = tmp_path / "envs" / worker_envs.env_name("3.12", version)
        built.mkdir(parents=True, exist_ok=True)
        worker_envs.seal(built, "/opt/py312/bin/python", version)
    said: list[str] = []
    assert chooser.practice_jax(NEEDS_312, said.append) == (NEEDS_312, None)
    assert chooser.practice_jax(None, said.append) == (None, None) and said == []


def test_where_the_environment_cannot_be_built_practice_falls_back_in_its_own_words(
    monkeypatch, tmp_path
):
    """No wheel folder, the package index closed (conftest): the newest version this Python
    installs instead, the line saying why in practice's words, never a VM's network advice."""
    monkeypatch.setattr(
        "tpuwizard.sandbox.workers.python.find_worker_python", lambda uv: sys.executable
    )
    monkeypatch.setenv(worker_envs.ENVS_ENV, str(tmp_path / "envs"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))  # nothing cached
    image.index_settings.cache_clear()
    said: list[str] = []
    version, line = chooser.practice_jax(NEEDS_312, said.append)
    image.index_settings.cache_clear()
    assert version == FITS_HERE and line is not None
    assert said and said[0].startswith("Practice: building the worker environment for jax")
    assert f"environment for jax {NEEDS_312} on Python 3.12 could not be built" in line
    assert f"{CLOSED_INDEX} cannot be reached from this computer" in line
    assert f"runs jax {FITS_HERE} on tpuwizard's Python" in line
    assert "Cloud NAT" not in line and "external" not in line
    assert worker_envs.built_env(tmp_path / "envs", "3.12", NEEDS_312) is None


def test_the_launch_says_the_build_as_it_starts_it(tmp_path):
    """The line the chooser says on its way (an environment being built) reaches the launch's
    events before the bootstrap, and the chooser is asked once per launch."""
    cloud = MemoryCloud()
    plan = make_plan(tmp_path, "vm")
    plan = replace(plan, workload=replace(plan.workload, jax=NEEDS_312))
    rt = make_runtime(tmp_path, cloud)
    asked: list[str | None] = []

    def chooser_saying(version: str | None, say: Callable[[str], None]) -> tuple[str | None, None]:
        asked.append(version)
        say("Practice: building the worker environment")
        return version, None

    rt.worker_jax = chooser_saying
    events: list[ev.Event] = []
    run_launch(plan, rt, events.append, CancelToken())
    lines = [e.text for e in events if isinstance(e, ev.BootstrapLine)]
    assert lines[:1] == ["Practice: building the worker environment"] and asked == [NEEDS_312]


def test_the_launch_says_it_before_the_bootstrap_and_pins_the_fallback(tmp_path, no_python_312):
    cloud = MemoryCloud()
    plan = make_plan(tmp_path, "vm")
    plan = replace(plan, workload=replace(plan.workload, jax=NEEDS_312))
    rt = make_runtime(tmp_path, cloud)
    rt.worker_jax = chooser.practice_jax
    ctx = LaunchContext(lambda e: None, CancelToken(), LaunchState(plan.zone))
    steps = WorkerSteps(worker_input(plan, rt), ctx)
    assert steps.worker_jax.requirement == f"jax=={FITS_HERE}"
    events: list[ev.Event] = []
    run_launch(plan, rt, events.append, CancelToken())  # its in-memory workers run nothing
    lines = [e.text for e in events if isinstance(e, ev.BootstrapLine)]
    assert lines and lines[0].startswith(f"Practice: jax {NEEDS_312} needs Python")
    # A real VM's runtime has no chooser: the plan's version is pinned as asked.
    rt.worker_jax = None
    steps = WorkerSteps(worker_input(plan, rt), ctx)
    assert steps.worker_jax.requirement == f"jax=={NEEDS_312}"
