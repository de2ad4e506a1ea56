"""Issue 36: `launch --jax` with a version outside tpuwizard's table, as a user runs it (a fresh
interpreter): exit 2 before anything is created, the table's versions listed."""

from __future__ import annotations

import json
import subprocess

from tests.conftest import REPO, clean_env, tpuwizard_cmd
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


def test_fit_refuses_a_worker_jax_outside_the_table_or_without_a_program(home, tmp_path):
    """Before any compile: exit 2, saying what --jax takes."""
    from click.testing import CliRunner

    from tpuwizard.cli import main

    program = tmp_path / "prog.py"
    program.write_text("def tpuwizard_plan(mesh):\n    pass\n")
    outside = CliRunner().invoke(main, ["fit", "--program", str(program), "--jax", "0.13.0"])
    assert outside.exit_code == 2
    assert "JAX '0.13.0' is not in tpuwizard's table" in " ".join(outside.output.split())
    alone = CliRunner().invoke(main, ["fit", "48", "--jax", jax_versions.TABLE[-1].version])
    assert alone.exit_code == 2 and "--jax is for --program" in alone.output


def test_fit_program_says_which_jax_compiled_and_the_workers_in_its_json(home):
    """The words and the JSON, from a real (shapes-only) run of the smallest example."""
    newest = jax_versions.TABLE[-1].version
    done = subprocess.run(
        tpuwizard_cmd(
            "fit", "--json", "--program", str(REPO / "examples" / "placement.py"),
            "--slices", "v5litepod-1", "--method", "shapes-only", "--jax", newest,
        ),
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(TPUWIZARD_HOME=str(home)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    said = " ".join(done.stderr.split())
    laptop = jax_versions.laptop_jax()
    assert (
        f"Counted the shapes with this computer's JAX {laptop}, not the worker's {newest}" in said
    )
    document = json.loads(done.stdout)["jax"]
    assert document == {"compiled_with": laptop, "worker": newest, "words": document["words"]}
    assert " ".join(document["words"].split()) in said
