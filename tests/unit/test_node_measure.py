"""`fit --program --measure --node NAME` (issue 45, item 3): what goes to the node, and how what
the node's measuring worker said becomes the measured row."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.core.launch.kept.measure import KIT_DIR, NodeMeasure, kit_files
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.program_at_hand import CPU_LABEL, from_node
from tpuwizard.core.plan.program_result import ProgramInputError

V5E_1 = catalog.parse_accelerator("v5litepod-1")
CPU_SEEN = {"platform": "cpu", "device_kind": "cpu", "devices": 1, "process_count": 1}


def test_the_kit_imports_only_itself_the_stdlib_and_jax():
    """The node's venv has JAX, not tpuwizard: every tpuwizard module the kit imports is in it."""
    files = kit_files()
    shipped = {rel.removesuffix(".py").replace("/", ".") for rel in files}
    for rel, data in files.items():
        for node in ast.walk(ast.parse(data)):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            ours = [n for n in names if n.startswith("tpuwizard")]
            assert not ours or any(n in shipped or f"{n}.__init__" in shipped for n in ours), rel


def test_the_kit_runs_from_its_folder_alone(tmp_path):
    """Run as the node runs it: PYTHONPATH the kit's folder only, the request as the argument."""
    pytest.importorskip("jax")
    for rel, data in kit_files().items():
        (tmp_path / "kit" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kit" / rel).write_bytes(data)
    (tmp_path / "prog.py").write_text(
        "import jax, jax.numpy as jnp\n"
        "def tpuwizard_plan(mesh):\n"
        "    return (lambda w: (w * 2).sum()), (jax.ShapeDtypeStruct((8,), jnp.float32),)\n"
    )
    request = {"program": "prog.py", "function": "tpuwizard_plan", "mesh": [], "steps": 2}
    site = ":".join(p for p in sys.path if "site-packages" in p)  # JAX, without tpuwizard's .pth
    out = subprocess.run(
        [sys.executable, "-S", "-m", "tpuwizard.core.plan.program_measure", json.dumps(request)],
        cwd=tmp_path,
        env={
            "PYTHONPATH": f"{tmp_path / 'kit'}:{site}",
            "JAX_PLATFORMS": "cpu",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = {}
    for line in out.stdout.splitlines():
        if line.startswith("TPUWIZARD-FIT "):
            said.update(json.loads(line.removeprefix("TPUWIZARD-FIT ")))
    assert said["at_hand"]["platform"] == "cpu", out.stderr
    assert said["measured"]["steps_timed"] >= 1, said


def test_the_command_points_at_the_kit_and_the_node_s_cache():
    measure = NodeMeasure(
        __import__("pathlib").Path("/x/train.py"), "tpuwizard_plan", [], 3, "r1", V5E_1, "cpu"
    )
    command = measure.command()
    assert f'PYTHONPATH="$HOME"/{KIT_DIR}' in command
    assert 'export JAX_COMPILATION_CACHE_DIR="$HOME"/.tpuwizard/compile-cache' in command
    assert '"program": "train.py"' in command  # the copied folder's file, not this computer's
    assert measure.env()["JAX_PLATFORMS"] == "cpu"


def test_a_practice_node_s_figures_are_labelled_cpu():
    run = from_node({"at_hand": CPU_SEEN, "measured": {"step_seconds": 0.1}}, 0, V5E_1)
    assert run.slice_name == "v5litepod-1" and not run.on_tpu and run.label == CPU_LABEL


def test_a_job_that_said_nothing_is_not_measured_and_not_called_cpu():
    run = from_node({}, 1, V5E_1)
    assert run.label == "not measured" and "exited with 1" in run.record["error"]


def test_a_tpu_that_is_not_the_kept_slice_is_bad_input():
    seen = {"platform": "tpu", "device_kind": "TPU v5 lite", "devices": 4, "process_count": 1}
    with pytest.raises(BadInput, match="not v5litepod-1"):
        from_node({"at_hand": seen, "measured": {}}, 0, V5E_1)
    seen_one = {**seen, "devices": 1}
    assert from_node({"at_hand": seen_one, "measured": {}}, 0, V5E_1).on_tpu


def test_a_problem_in_the_program_is_said_as_fit_says_it():
    with pytest.raises(ProgramInputError, match="no tpuwizard_plan"):
        from_node({"problem": "no-function", "message": "no tpuwizard_plan"}, 0, V5E_1)


def test_node_without_measure_is_bad_input():
    from click.testing import CliRunner

    from tpuwizard.cli import main

    result = CliRunner().invoke(main, ["fit", "--program", "x.py", "--node", "n"])
    assert result.exit_code == 2 and "--node is for --program --measure" in result.output
