"""fit held against the TPU at hand (issue 45): a step whose compiled peak is just under the
generation's usable HBM is predicted to fit and runs; one just over it is refused by the compiler
and said so, by the prediction and by the run alike, never as a crash."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.tpu import devices_at_hand, run_here
from tpuwizard.core.plan import catalog, program_fit
from tpuwizard.core.plan.program_at_hand import slice_at_hand
from tpuwizard.core.plan.program_result import SliceProgramFit

COLUMNS = 131072  # whole (8, 128) tiles: the compiled bytes are the shapes' own
STEP = """
import jax, jax.numpy as jnp

def step(w):
    return w * 2.0 + 1.0  # not donated: the output is a second copy of w

def tpuwizard_plan(mesh):
    return jax.jit(step), (jax.ShapeDtypeStruct(({rows}, {columns}), jnp.float32),)
"""


def _program(tmp_path: Path, share: float) -> tuple[Path, catalog.Slice]:
    """A step whose peak (w and its copy) is ``share`` of the chip's usable HBM."""
    found = slice_at_hand(devices_at_hand())
    assert found is not None and found.chips == 1, "these tests are written for one chip"
    usable = found.generation.usable_bytes_per_chip
    rows = int(usable * share / 2 / 4 / COLUMNS) // 8 * 8
    path = tmp_path / f"step_{share}.py"
    path.write_text(STEP.format(rows=rows, columns=COLUMNS))
    return path, found


def _row(path: Path, found: catalog.Slice) -> SliceProgramFit:
    planner = program_fit.ProgramPlanner(path, [found], measure=True, use_cache=False)
    (row,) = list(planner.results())
    return row


def test_a_step_just_under_the_usable_figure_fits_and_runs(tmp_path: Path) -> None:
    path, found = _program(tmp_path, 0.97)  # v5e: 16.40e9 B, between 16.15 and 16.6 GB
    row = _row(path, found)
    peak = row.per_device_bytes["peak"]
    assert row.fits is True, row.note
    assert peak is not None and peak > 0.96 * found.generation.usable_bytes_per_chip
    assert row.measured is not None and row.measured["fits"] is True, row.measured
    assert row.measured["on"] == "tpu" and row.measured["step_seconds"] > 0
    # The run's peak is the step's own (w and its copy): near the compiler's figure.
    assert abs(row.measured["peak_bytes"] - peak) < 0.05 * peak, (row.measured, peak)


def test_a_step_just_over_it_is_refused_and_said(tmp_path: Path) -> None:
    path, found = _program(tmp_path, 1.02)
    row = _row(path, found)
    assert row.fits is False, row.note
    assert "compiler_limit_bytes" in row.extra, row.note  # the limit the refusal names
    assert row.measured is not None and row.measured["fits"] is False, row.measured
    assert row.measured["note"].startswith("does not fit:")


if __name__ == "__main__":
    sys.exit(run_here(globals()))
