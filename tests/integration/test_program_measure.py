"""`fit --program --measure`'s run, on this machine's CPU devices standing in for the slice
(measure_on_cpu, as a practice node would): every example that defines tpuwizard_plan is built as
real arrays on its shardings, compiled, run and timed, and the figures are labelled as the CPU's,
never replacing the prediction (issue 45). On a real TPU the same path runs in tests/tpu/."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tpuwizard.core.plan import catalog, program_fit

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("example", "slice_name"),
    [("placement.py", "v5litepod-1"), ("mlp_adam.py", "v5litepod-4"), ("transformer.py", "v6e-1")],
)
def test_each_example_runs_on_cpu_devices_labelled_practice(example, slice_name):
    chosen = [catalog.parse_accelerator(slice_name), catalog.parse_accelerator("v6e-8")]
    planner = program_fit.ProgramPlanner(
        REPO / "examples" / example,
        chosen,
        method="shapes-only",  # the prediction's own path is tests/integration/test_program_fit
        measure=True,
        measure_on_cpu=True,
        measure_steps=2,
    )
    rows = {r.name: r for r in planner.results()}
    measured = rows[slice_name].measured
    assert measured is not None, rows[slice_name]
    assert measured["label"] == "CPU (practice), not a TPU" and measured["on"] == "cpu-practice"
    assert measured["fits"] is True, measured
    assert measured["devices"] == chosen[0].devices  # as many CPU devices as the slice has
    assert measured["step_seconds"] > 0 and measured["steps_timed"] >= 1
    assert measured["usd_per_1000_steps"] is None  # a CPU's time prices no TPU
    assert "peak_bytes" not in measured  # a CPU device has no memory statistics
    assert rows["v6e-8"].measured is None  # every other row stays a prediction
    assert rows[slice_name].fits is True and rows[slice_name].step_seconds is None
    if example == "transformer.py":
        assert measured["donated"] is True  # its state is donated: made afresh for each step


def test_a_step_that_raises_while_it_runs_is_said_not_a_crash(tmp_path):
    program = tmp_path / "raises.py"
    program.write_text(
        "import jax, jax.numpy as jnp\n"
        "def step(x):\n"
        "    return jax.debug.callback(lambda v: (_ for _ in ()).throw(ValueError('boom')), x)\n"
        "def tpuwizard_plan(mesh):\n"
        "    return step, (jax.ShapeDtypeStruct((8,), jnp.float32),)\n"
    )
    planner = program_fit.ProgramPlanner(
        program,
        [catalog.parse_accelerator("v5litepod-1")],
        method="shapes-only",
        measure=True,
        measure_on_cpu=True,
        measure_steps=1,
    )
    (row,) = planner.results()
    assert row.measured["fits"] is None
    assert row.measured["note"].startswith("not measured:")
