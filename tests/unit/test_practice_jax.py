"""Issue 36: where this computer has no Python 3.12, a practice worker asked for a JAX that needs
one runs the newest version of the table tpuwizard's own Python can install, and one line says
so before its bootstrap; with a 3.12, or on a real VM, the plan's version is installed."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.launch_state import LaunchState
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.plan.jax_versions import TABLE
from tpuwizard.session import practice_jax as chooser

NEEDS_312 = next(v.version for v in reversed(TABLE) if v.min_python > sys.version_info[:2])
FITS_HERE = [v.version for v in TABLE if v.min_python <= sys.version_info[:2]][-1]


@pytest.fixture
def no_python_312(monkeypatch):
    monkeypatch.setattr("tpuwizard.sandbox.worker_python.find_worker_python", lambda uv: None)


def test_without_python_312_practice_runs_the_newest_version_this_python_installs(no_python_312):
    version, said = chooser.practice_jax(NEEDS_312)
    assert version == FITS_HERE and said is not None
    assert f"jax {NEEDS_312} needs Python 3.12 or newer" in said
    assert f"runs jax {FITS_HERE} on tpuwizard's Python" in said
    assert "uv python install 3.12" in said
    # The default and a version this Python installs run as asked, with nothing said.
    assert chooser.practice_jax(None) == (None, None)
    assert chooser.practice_jax(FITS_HERE) == (FITS_HERE, None)


def test_with_a_python_312_practice_runs_the_version_asked_for(monkeypatch):
    monkeypatch.setattr(
        "tpuwizard.sandbox.worker_python.find_worker_python", lambda uv: "/opt/py312/bin/python"
    )
    assert chooser.practice_jax(NEEDS_312) == (NEEDS_312, None)


def test_the_launch_says_it_before_the_bootstrap_and_pins_the_fallback(tmp_path, no_python_312):
    cloud = MemoryCloud()
    plan = replace(make_plan(tmp_path, "vm"), jax=NEEDS_312)
    rt = make_runtime(tmp_path, cloud)
    rt.worker_jax = chooser.practice_jax
    steps = WorkerSteps(plan, rt, lambda e: None, CancelToken(), LaunchState(plan.zone))
    assert steps.worker_jax.requirement == f"jax=={FITS_HERE}"
    events: list[ev.Event] = []
    run_launch(plan, rt, events.append, CancelToken())  # its in-memory workers run nothing
    lines = [e.text for e in events if isinstance(e, ev.BootstrapLine)]
    assert lines and lines[0].startswith(f"Practice: jax {NEEDS_312} needs Python")
    # A real VM's runtime has no chooser: the plan's version is pinned as asked.
    rt.worker_jax = None
    assert steps.worker_jax.requirement == f"jax=={NEEDS_312}"
