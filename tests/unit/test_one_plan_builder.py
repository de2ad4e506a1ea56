"""A launch plan is assembled, and a run id minted, in one place each (issue 38): front ends
hand over answers, and the session makes the plan for a new run. A second place that builds a
``LaunchPlan(...)`` or calls ``new_run_id()`` would fill defaults its own way again."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tpuwizard"


def callers(name: str) -> set[str]:
    """Every module and function of tpuwizard that calls ``name`` (bare or as an attribute)."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for scope in ast.walk(tree):
            if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(scope):
                if isinstance(node, ast.Call):
                    func = node.func
                    called = (
                        func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    )
                    if called == name:
                        found.add(f"{path.relative_to(PACKAGE.parent)}:{scope.name}")
    return found


def test_a_launch_plan_is_assembled_in_one_place():
    assert callers("LaunchPlan") == {"tpuwizard/core/launch/plan/launch_plan.py:plan_for_run"}


def test_a_run_id_is_minted_in_one_place():
    assert callers("new_run_id") == {"tpuwizard/session/session.py:new_run"}


def test_the_session_plans_a_new_run_with_its_own_project_and_run_folder(tmp_path):
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.parts import Where
    from tpuwizard.core.plan.catalog import parse_accelerator
    from tpuwizard.session.session import Session

    session = Session(practice=True, runs=tmp_path / "runs")
    asked = LaunchAnswers(Where(parse_accelerator("v5litepod-4"), "us-central1-a"))
    first = session.plan_launch(asked, Backend.TPU_API)
    elsewhere = LaunchAnswers(Where(parse_accelerator("v5litepod-4"), "us-central1-a", "p2"))
    second = session.plan_launch(elsewhere, Backend.TPU_API)
    assert first.run_id != second.run_id
    assert first.run_dir == tmp_path / "runs" / first.run_id
    assert first.project == session.project and second.project == "p2"


def test_a_script_pass_on_the_workers_is_written_once():
    # A launch and a kept node's run copy the folder, run the script and fetch its files
    # through one pass (core/launch/workers/script_pass.py): a second copy of the sequence would
    # drift (the resume point, the output file, the fetched files' layout).
    one_pass = "tpuwizard/core/launch/workers/script_pass.py"
    assert callers("run_script_job") == {f"{one_pass}:run_then_fetch"}
    assert callers("fetch_files") == {f"{one_pass}:run_then_fetch"}
    assert callers("sync_folder") == {f"{one_pass}:copy_folder"}
