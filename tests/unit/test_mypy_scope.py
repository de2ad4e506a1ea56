"""mypy reads every test that builds the launch's answers, plans or parts (issue 53, step 5): the
modules still listed as not typed in pyproject.toml build none of them, and the list only
shrinks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What building answers, a plan or a part looks like in a test.
BUILDS = re.compile(
    r"\b(launch_plan|launch_answers|changed|LaunchAnswers|LaunchPlan|Where|Workload|Deadline"
    r"|Resume|Guards|Reach)\("
)
MOST_UNTYPED = 69  # the count when the last of the answer-building modules was typed


def untyped_modules() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found: list[str] = []
    for override in config["tool"]["mypy"]["overrides"]:
        if override.get("ignore_errors"):
            modules = override["module"]
            found += [modules] if isinstance(modules, str) else modules
    return found


def test_no_untyped_test_module_builds_answers_plans_or_parts():
    builders = []
    for module in untyped_modules():
        path = ROOT / (module.replace(".", "/") + ".py")
        if BUILDS.search(path.read_text()):
            builders.append(module)
    assert builders == [], f"type these, then take them out of pyproject's list: {builders}"


def test_the_untyped_list_only_shrinks():
    modules = untyped_modules()
    assert all(m.startswith("tests.") for m in modules)
    assert len(modules) <= MOST_UNTYPED
