"""A kept practice node's warm compile cache (issue 45, item 4), through the real CLI: `up`, then
two `run`s of a small jitted script; the second says the cache hit. The practice workers run
real JAX on CPU, whose persistent compilation cache JAX 0.10 writes as on a TPU."""

from __future__ import annotations

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
