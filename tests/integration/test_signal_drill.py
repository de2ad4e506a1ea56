"""The signal drill's rotation: each command (the wizard on a pseudo-terminal too) stopped at
each of its points by one signal, the signals rotated so that each command meets every one of
them; then the commands again on Compute Engine, one signal a point, turned so that each point
meets another signal there than on the TPU API. `run`'s copy-back meets a stop signal on both
(the file must arrive whole: judged only after one). What is judged, and the whole matrix:
tests/integration/signal_drill.py, benchmarks/signal_drill.py."""

from __future__ import annotations

import signal

import pytest

from tests.integration.drill_backends import sandbox_names
from tests.integration.signal_drill import (
    SIGNALS,
    STOP_SIGNALS,
    Case,
    clean_up,
    rotated_cases,
    run_case,
    run_case_on,
    up_node,
)
from tests.integration.signal_drill_wizard import run_wizard_case

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("signal-drill")

COMMANDS = ("launch", "launch --keep", "up", "run", "wizard", "wizard+kept")
ROTATION = rotated_cases(COMMANDS)
COMPUTE = rotated_cases(COMMANDS[:4], backend="compute", offset=2)  # the wizard: TPU API only
LAUNCHES = [c for c in ROTATION + COMPUTE if c.command not in ("run", "wizard", "wizard+kept")]
# The rotation gives Compute Engine's copy-back SIGKILL; a stop signal there too (on the node
# that is up already: one run more, not one `up` more).
COPY_BACK_STOPPED = Case("run", "fetch", signal.SIGINT, "compute")
RUNS = {
    b: [
        c for c in (*ROTATION, *COMPUTE, COPY_BACK_STOPPED) if c.command == "run" and c.backend == b
    ]
    for b in ("tpu-api", "compute")
}
# The file the copy-back cases fetch, in MiB: on Compute Engine the least that is streamed in
# more than one chunk (core/remote/fetch.py's FetchLimits.chunk, 1 MiB).
FETCH_MIB = {"tpu-api": 64, "compute": 2}
WIZARD = [c for c in ROTATION if c.command.startswith("wizard")]


def label(case) -> str:
    return case.label.replace(" ", "-")


@pytest.mark.parametrize("rotation", [ROTATION, COMPUTE], ids=["tpu-api", "compute"])
def test_the_rotation_gives_each_command_every_signal_it_has_points_for(rotation):
    for command in {c.command for c in rotation}:
        points = [c for c in rotation if c.command == command]
        assert len({c.sig for c in points}) == min(len(points), len(SIGNALS)), command


def test_compute_meets_each_point_with_another_signal_than_the_tpu_api():
    on_tpu_api = {(c.command, c.point): c.sig for c in ROTATION}
    assert COMPUTE and all(on_tpu_api[(c.command, c.point)] != c.sig for c in COMPUTE)
    assert on_tpu_api[("run", "fetch")] != COPY_BACK_STOPPED.sig


@pytest.mark.parametrize("backend", list(RUNS))
def test_each_backends_copy_back_meets_a_stop_signal(backend):
    assert any(c.point == "fetch" and c.sig in STOP_SIGNALS for c in RUNS[backend])


@pytest.mark.parametrize("case", LAUNCHES, ids=[label(c) for c in LAUNCHES])
def test_a_signal_at_each_point_leaves_nothing_billing(tmp_path, case):
    outcome = run_case(case, tmp_path / "case")
    assert outcome.passed, outcome.problems


@pytest.mark.parametrize("backend", list(RUNS))
def test_a_signal_at_each_point_of_run_stops_the_script_never_the_node(tmp_path, backend):
    node = up_node(tmp_path, backend=backend)  # one node for every point: a run never ends it
    try:
        outcomes = [
            run_case_on(case, tmp_path, node, fetch_mib=FETCH_MIB[backend])
            for case in RUNS[backend]
        ]
    finally:
        clean_up(tmp_path / "state", tmp_path)
    assert {o.case.label: o.problems for o in outcomes} == {c.label: [] for c in RUNS[backend]}
    assert sandbox_names(tmp_path / "state") == set()  # the drill's own teardown ended it


@pytest.mark.parametrize("case", WIZARD, ids=[label(c) for c in WIZARD])
def test_a_signal_at_each_point_of_the_wizard_leaves_only_what_was_kept(tmp_path, case):
    outcome = run_wizard_case(case, tmp_path / "case")
    assert outcome.passed, outcome.problems
