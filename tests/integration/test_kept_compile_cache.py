"""A kept practice node's warm compile cache (issue 45, item 4), through the real CLI: `up`, then
two `run`s of a small jitted script; the second says the cache hit. The practice workers run
real JAX on CPU, whose persistent compilation cache JAX 0.10 writes as on a TPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.iterate_helpers import down, json_events, run, up

pytestmark = pytest.mark.rotating("kept-node-e2e")

JITTED = (
    "import jax, jax.numpy as jnp\n"
    "step = jax.jit(jax.grad(lambda w, x: jnp.tanh(x @ w).sum()))\n"
    "print('grad', float(step(jnp.ones((16, 16)), jnp.ones((4, 16))).sum()), flush=True)\n"
)


def test_the_second_run_on_a_kept_node_reads_its_compile_from_the_cache(tmp_path, project):
    script = project / "train.py"
    script.write_text(JITTED)
    kept = up(tmp_path)

    first = run(tmp_path, str(script))
    assert first.returncode == 0, first.stderr
    assert "compile cache: cold, " in first.stderr

    second = run(tmp_path, "--json", str(script))
    assert second.returncode == 0, second.stderr
    cache = [e for e in json_events(second.stdout) if e["event"] == "compile_cache"]
    assert len(cache) == 1 and cache[0]["hit"] is True
    assert cache[0]["before"] == cache[0]["after"] > 0

    third = run(tmp_path, str(script))
    assert "compile cache: hit, nothing compiled again" in third.stderr
    gone = down(tmp_path, kept["name"])
    assert [r["verified"] for r in gone["results"]] == [True]


def test_fit_measure_on_a_kept_practice_node_is_labelled_cpu_beside_the_prediction(
    tmp_path, project
):
    """Issue 45, item 3's --node: the measurement runs on the kept node through its run path,
    streamed; a practice node's figures are its CPU's and never replace the prediction."""
    import json
    import shutil
    import subprocess

    from tests.conftest import tpuwizard_cmd
    from tests.integration.launch_helpers import env

    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copy(examples / "mlp_adam.py", project / "mlp_adam.py")
    kept = up(tmp_path)
    fit = subprocess.run(
        tpuwizard_cmd(
            "fit", "--program", str(project / "mlp_adam.py"), "--measure", "--node",
            kept["name"], "--sandbox", "--slices", "v5litepod-1,v5litepod-4", "--json",
        ),
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env(),
    )  # fmt: skip
    assert fit.returncode == 0, fit.stderr
    assert f"on {kept['name']} (--measure --node)" in fit.stderr
    assert "copied " in fit.stderr  # the run path's copy, said as a run says it
    table = json.loads(fit.stdout)
    assert table["measured_slice"] == "v5litepod-1"
    rows = {row["name"]: row for row in table["slices"]}
    measured = rows["v5litepod-1"]["measured"]
    assert measured["label"] == "CPU (practice), not a TPU" and measured["on"] == "cpu-practice"
    assert measured["step_seconds"] > 0 and measured["usd_per_1000_steps"] is None
    assert rows["v5litepod-1"]["per_device_bytes"]  # the prediction stays
    assert not rows["v5litepod-4"].get("measured")

    # A --node that names no kept node is bad input.
    wrong = subprocess.run(
        tpuwizard_cmd(
            "fit", "--program", str(project / "mlp_adam.py"), "--measure", "--node", "nope",
            "--sandbox",
        ),
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env(),
    )  # fmt: skip
    assert wrong.returncode == 2 and "No kept node called 'nope'" in wrong.stderr
    gone = down(tmp_path, kept["name"])
    assert [r["verified"] for r in gone["results"]] == [True]
