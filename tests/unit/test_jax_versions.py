"""Issue 36: the worker's JAX comes from a table; --jax picks one of it (launch, up), a version
outside it is refused before anything is made, and the receipt names both sides' JAX."""

from __future__ import annotations

from pathlib import Path

from tests.plans import launch_plan
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_settings, replacement_answers
from tpuwizard.core.launch.plan.launch_plan import plan_for_run
from tpuwizard.core.launch.records.ledger import Entry, Resource
from tpuwizard.core.plan import jax_versions
from tpuwizard.core.plan.jax_versions import DEFAULT, TABLE, jax_problems
from tpuwizard.core.remote.bootstrap import (
    TESTED_JAX,
    BootstrapPlan,
    bootstrap_script,
    sandbox_plan,
    unpinned_jax,
)
from tpuwizard.words.event_text import describe as event_lines


def test_the_table_holds_each_version_once_newest_last_with_its_facts():
    listed = [v.version for v in TABLE]
    assert len(set(listed)) == len(listed)
    assert listed == sorted(listed, key=lambda v: tuple(int(p) for p in v.split(".")))
    for v in TABLE:
        assert v.libtpu.startswith("0.0.") and v.python.startswith(">=3.")
        assert v.source.startswith(f"https://pypi.org/project/jax/{v.version}/")
        assert v.runs_here and (v.in_suite or v.in_drill)  # each is run here, and by the tests
        assert v.tpu_runs == ()  # nothing here was run on a TPU, and the table says so
        assert "not run on v6e" in v.generation_support("v6e")


def test_the_default_is_the_newest_version_the_suite_runs_and_the_pin():
    assert DEFAULT.in_suite and DEFAULT.version == TESTED_JAX
    assert not [v for v in TABLE if v.in_suite and v.min_python > DEFAULT.min_python]
    assert BootstrapPlan().requirement == f"jax[tpu]=={DEFAULT.version}"
    # Issue 36: the newest of the table, for real workers and practice ones alike.
    assert DEFAULT is TABLE[-1] and sandbox_plan().requirement == f"jax=={DEFAULT.version}"
    # Every other version turns in the rotating drill (test_jax_table_drill.py).
    assert [v for v in TABLE if v.in_drill] == [v for v in TABLE if v is not DEFAULT]


def test_a_version_outside_the_table_is_a_problem_naming_every_version():
    assert jax_problems(None) == [] and jax_problems(TABLE[-1].version) == []
    (problem,) = jax_problems("0.13.0")
    for v in TABLE:
        assert v.version in problem
    plan = launch_plan("v5litepod-1", "us-central1-a", "p", "r1", Path("runs/r1"), jax="0.9.2")
    assert any("'0.9.2' is not in tpuwizard's table" in str(p) for p in plan.problems())


def test_the_plans_jax_replaces_the_pin_on_a_vm_and_in_practice():
    newest = next(v.version for v in reversed(TABLE) if v != DEFAULT)  # another than the default
    real = BootstrapPlan().with_jax(newest)
    assert real.requirement == f"jax[tpu]=={newest}" and real.pinned_jax == newest
    assert f"'jax[tpu]=={newest}' numpy" in bootstrap_script(real)
    assert sandbox_plan().with_jax(newest).requirement == f"jax=={newest}"
    assert BootstrapPlan().with_jax(None) == BootstrapPlan()
    # A worker that resolved another JAX is refused against the plan's pin, not the default.
    said = unpinned_jax(real, {0: {"jax": DEFAULT.version}})
    assert said and f"installs jax {newest}" in said


def test_a_kept_node_remembers_its_jax_for_a_replacement():
    """`run --checkpoints` makes a preempted kept node again from its record: with its JAX, or
    the new venv would not be the one the kept node's runs were verified on."""
    plan = launch_plan("v5litepod-1", "us-central1-a", "p", "r1", Path("runs/r1"), jax="0.11.2")
    settings = kept_settings(plan)
    assert settings["jax"] == "0.11.2"
    r = Resource("node", "p", "us-central1-a", "dev", "v5litepod-1", "r1", "vm", "dev")
    answers = replacement_answers(Entry(r, "kept", 1, 1, {SETTINGS_FIELD: settings}))
    assert plan_for_run("r2", Path("x"), answers, answers.where.backend).workload.jax == "0.11.2"
    answers = replacement_answers(Entry(r, "kept", 1, 1, {}))
    assert (
        plan_for_run("r2", Path("x"), answers, answers.where.backend).workload.jax is None
    )  # default


def test_the_versions_line_names_this_computers_jax_and_says_when_it_differs():
    worker = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "libtpu": None, "python": "3.12.1"}
    lines = event_lines(ev.Versions(0, worker, 1, laptop_jax="0.10.2"))
    assert "this computer: JAX 0.10.2" in lines[0]
    assert any("This computer has JAX 0.10.2, the worker JAX 0.12.0.1" in ln for ln in lines)
    same = event_lines(ev.Versions(0, {**worker, "jax": "0.10.2"}, 1, laptop_jax="0.10.2"))
    assert not any("This computer has" in ln for ln in same)
    # Said once for a slice, on worker 0's line.
    second = event_lines(ev.Versions(1, worker, 2, laptop_jax="0.10.2"))
    assert not any("This computer has" in ln for ln in second)


def test_this_computers_jax_is_read_without_importing_it():
    import importlib.metadata
    import sys

    had = "jax" in sys.modules
    assert jax_versions.laptop_jax() == importlib.metadata.version("jax")
    assert ("jax" in sys.modules) == had


def test_fit_program_says_it_compiles_with_this_computers_jax_and_when_the_workers_differs(
    monkeypatch,
):
    """fit --program compiles with the JAX beside tpuwizard: said always, with the worker's
    version where it is another, and why it was not used (its Python, where that is the
    reason)."""
    default = jax_versions.DEFAULT
    # Another version than the default, needing Python 3.12.
    newest = next(v for v in reversed(TABLE) if v != default and v.min_python >= (3, 12))
    monkeypatch.setattr(jax_versions, "laptop_jax", lambda: default.version)
    same = jax_versions.compile_words(None, compiled=True)
    assert same == f"Compiled with this computer's JAX {default.version}, the worker's version too."
    assert jax_versions.compile_words(default.version, compiled=False).startswith(
        "Counted the shapes with this computer's JAX"
    )
    other = jax_versions.compile_words(newest.version, compiled=True)
    assert f"not the worker's {newest.version}" in other
    assert "fit uses the JAX installed beside tpuwizard" in other
    assert "can differ between JAX versions" in other
    monkeypatch.setattr("tpuwizard.core.plan.jax_versions.sys.version_info", (3, 11, 9))
    too_old = jax_versions.compile_words(newest.version, compiled=True)
    assert f"JAX {newest.version} needs Python 3.12 or newer (this is 3.11)" in too_old
    monkeypatch.setattr("tpuwizard.core.plan.jax_versions.sys.version_info", (3, 12, 1))
    assert "needs Python" not in jax_versions.compile_words(newest.version, compiled=True)
    monkeypatch.setattr(jax_versions, "laptop_jax", lambda: "0.9.2")
    assert f"JAX 0.9.2, not the worker's {default.version}" in jax_versions.compile_words(
        None, compiled=True
    )
