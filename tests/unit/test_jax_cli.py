"""Issue 36: `launch --jax` with a version outside tpuwizard's table, as a user runs it (a fresh
interpreter): exit 2 before anything is created, the table's versions listed."""

from __future__ import annotations

import subprocess

from tests.conftest import clean_env, tpuwizard_cmd
from tests.unit.test_cli_bad_input import LAUNCH
from tpuwizard.core.plan import jax_versions


def test_launch_refuses_a_version_outside_the_table_before_create(home, tmp_path):
    """As a user runs it: exit 2, the table's versions listed, nothing created."""
    done = subprocess.run(
        tpuwizard_cmd(*LAUNCH, "--jax", "0.13.0"),
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(TPUWIZARD_HOME=str(home)),
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    said = " ".join(done.stderr.split())
    assert "JAX '0.13.0' is not in tpuwizard's table" in said
    assert ", ".join(jax_versions.versions()) in said and "Traceback" not in said
    assert not (home / "ledger.jsonl").exists() and not (home / "sandbox").exists()
