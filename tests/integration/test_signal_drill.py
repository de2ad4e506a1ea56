"""The signal drill's rotation: each command (the wizard on a pseudo-terminal too) stopped at
each of its points by one signal, the signals rotated so that each command meets every one of
them. What is judged, and the whole matrix: tests/integration/signal_drill.py,
benchmarks/signal_drill.py."""

from __future__ import annotations

import pytest

from tests.integration.signal_drill import (
    SIGNALS,
    clean_up,
    rotated_cases,
    run_case,
    run_case_on,
    sandbox_names,
    up_node,
)
from tests.integration.signal_drill_wizard import run_wizard_case

COMMANDS = ("launch", "launch --keep", "up", "run", "wizard")
ROTATION = rotated_cases(COMMANDS)
LAUNCHES = [c for c in ROTATION if c.command not in ("run", "wizard")]
RUNS = [c for c in ROTATION if c.command == "run"]
WIZARD = [c for c in ROTATION if c.command == "wizard"]


def test_the_rotation_gives_each_command_every_signal_it_has_points_for():
    for command in COMMANDS:
        points = [c for c in ROTATION if c.command == command]
        assert len({c.sig for c in points}) == min(len(points), len(SIGNALS)), command


@pytest.mark.parametrize("case", LAUNCHES, ids=[c.label.replace(" ", "-") for c in LAUNCHES])
def test_a_signal_at_each_point_leaves_nothing_billing(tmp_path, case):
    outcome = run_case(case, tmp_path / "case")
    assert outcome.passed, outcome.problems


def test_a_signal_at_each_point_of_run_stops_the_script_never_the_node(tmp_path):
    node = up_node(tmp_path)  # one node for every point: a run never ends it
    try:
        outcomes = [run_case_on(case, tmp_path, node) for case in RUNS]
    finally:
        clean_up(tmp_path / "state", tmp_path)
    assert {o.case.label: o.problems for o in outcomes} == {c.label: [] for c in RUNS}
    assert sandbox_names(tmp_path / "state") == set()  # the drill's own teardown ended it


@pytest.mark.parametrize("case", WIZARD, ids=[c.label.replace(" ", "-") for c in WIZARD])
def test_a_signal_at_each_point_of_the_wizard_leaves_nothing_billing(tmp_path, case):
    outcome = run_wizard_case(case, tmp_path / "case")
    assert outcome.passed, outcome.problems
