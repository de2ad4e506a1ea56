"""`fit --program` with bad input: a clear message naming the problem, exit 2, and the user's
traceback trimmed to their own frames."""

from __future__ import annotations

import subprocess
import textwrap

import pytest

from tests.conftest import REPO, clean_env, tpuwizard_cmd
from tpuwizard.core.plan import program_fit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not program_fit.libtpu_installed(), reason="libtpu is not installed"),
]


def fit_program(tmp_path, source: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "prog.py"
    if source is not None:
        program.write_text(textwrap.dedent(source))
    return subprocess.run(
        tpuwizard_cmd("fit", "--program", str(program), "--slices", "v5litepod-4", *args),
        capture_output=True,
        text=True,
        env=clean_env(TPUWIZARD_HOME=str(tmp_path / "home")),
        timeout=300,
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_missing_file(tmp_path):
    proc = fit_program(tmp_path, None)
    assert proc.returncode == 2
    assert f"{tmp_path / 'prog.py'} is not a file" in one_line(proc.stderr)


def test_a_file_without_the_function_lists_what_it_defines(tmp_path):
    proc = fit_program(tmp_path, "def plan(mesh):\n    pass\n")
    assert proc.returncode == 2
    text = one_line(proc.stderr)
    assert "defines no function tpuwizard_plan(mesh)" in text
    assert "--function" in text and "Functions it defines: plan" in text


def test_another_function_name_is_used_with_function(tmp_path):
    proc = fit_program(tmp_path, "def plan(mesh):\n    pass\n", "--function", "nope")
    assert proc.returncode == 2 and "no function nope(mesh)" in one_line(proc.stderr)


def test_a_function_that_raises_shows_only_the_users_frames(tmp_path):
    source = """
    def helper(mesh):
        return 1 / 0

    def tpuwizard_plan(mesh):
        return helper(mesh)
    """
    proc = fit_program(tmp_path, source)
    assert proc.returncode == 2
    err = proc.stderr
    assert "tpuwizard_plan(mesh) raised" in err
    assert "Traceback (your code only):" in err
    assert f'File "{tmp_path / "prog.py"}", line 6, in tpuwizard_plan' in err
    assert "line 3, in helper" in err and "ZeroDivisionError: division by zero" in err
    assert "program_worker" not in err and "site-packages" not in err


def test_an_error_inside_the_step_is_traced_to_the_users_line(tmp_path):
    source = """
    import jax, jax.numpy as jnp

    def step(a):
        return a @ jnp.ones((3, 3))

    def tpuwizard_plan(mesh):
        return step, (jax.ShapeDtypeStruct((8, 128), jnp.float32),)
    """
    proc = fit_program(tmp_path, source)
    assert proc.returncode == 2
    assert "tracing your step failed" in proc.stderr
    assert "line 5, in step" in proc.stderr
    assert "jax/_src" not in proc.stderr


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        ("None", "must return (step, args)"),
        ("(lambda x: x,)", "of length 1"),
        ("(lambda x: x, jnp.ones(3))", "make them a tuple"),
        ("(lambda x: x, ('text',))", "an argument is a str"),
    ],
)
def test_a_function_that_returns_the_wrong_shape(tmp_path, returned, says):
    source = f"""
    import jax.numpy as jnp

    def tpuwizard_plan(mesh):
        return {returned}
    """
    proc = fit_program(tmp_path, source)
    assert proc.returncode == 2
    assert says in one_line(proc.stderr)


def test_a_mesh_that_needs_more_devices_than_the_slice_has(tmp_path):
    proc = fit_program(
        tmp_path, (REPO / "examples" / "transformer.py").read_text(), "--mesh", "data=2,model=4"
    )
    assert proc.returncode == 2
    assert "the mesh data=2 x model=4 needs 8 devices, but v5litepod-4 has 4" in one_line(
        proc.stderr
    )


@pytest.mark.parametrize("mesh", ["data=0", "data,model", "9x=2", "data=2,data=2"])
def test_a_mesh_that_is_not_understood(tmp_path, mesh):
    proc = fit_program(tmp_path, "def tpuwizard_plan(mesh): pass\n", "--mesh", mesh)
    assert proc.returncode == 2 and "--mesh" in proc.stderr


def test_program_and_a_size_together(tmp_path):
    proc = fit_program(tmp_path, "def tpuwizard_plan(mesh): pass\n", "48")
    assert proc.returncode == 2 and "not both" in proc.stderr
