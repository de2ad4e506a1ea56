"""The exact commands a real TPU VM runs to set up JAX, checked as text (no VM here)."""

import re
import shlex
import tomllib

from tests.conftest import REPO
from tpuwizard.core.remote.bootstrap import (
    TESTED_JAX,
    TPU_REQUIREMENT,
    BootstrapPlan,
    bootstrap_script,
    sandbox_plan,
)


def test_a_real_vm_installs_uv_then_a_managed_python_then_the_tested_jax():
    script = bootstrap_script(BootstrapPlan())
    steps = [
        'export PATH="$HOME/.local/bin:$PATH"',
        "python3 -m pip install --quiet --user uv",
        'curl -LsSf https://astral.sh/uv/install.sh -o "$installer" && sh "$installer"',
        'uv venv --quiet --python 3.12 "$venv"',
        f"uv pip install --python \"$venv/bin/python\" 'jax[tpu]=={TESTED_JAX}' numpy",
    ]
    at = [script.index(step) for step in steps]
    assert at == sorted(at), "the steps run in this order"
    # Never the system Python 3.10 for JAX: on it pip resolves jax 0.6.2 / libtpu 0.0.17.
    assert "python3 -m venv" not in script and "pip install jax" not in script
    assert "--system-site-packages" not in script


def test_the_pin_is_in_one_place_and_reported_with_the_versions():
    assert BootstrapPlan().pinned_jax == TESTED_JAX
    assert BootstrapPlan(requirement="jax").pinned_jax is None
    last = bootstrap_script(BootstrapPlan()).splitlines()[-1]
    assert last.endswith(f"'jax[tpu]=={TESTED_JAX}'")  # the versions line says what was asked


JAX_PIN = re.compile(r"jax(?:\[tpu\])?==([0-9][\w.]*)")


def test_pyproject_and_the_docs_pin_the_jax_the_workers_install():
    """TESTED_JAX is the pin; pyproject's requirements (they cannot import it) and every pin the
    docs quote must say the same version, so a bump that misses one copy fails here."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].values()
    requirements = [*project["dependencies"], *(r for extra in extras for r in extra)]
    assert f"jax=={TESTED_JAX}" in requirements and f"jax[tpu]=={TESTED_JAX}" in requirements
    docs = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "scripts").glob("*.sh")]
    quoted = [pin for path in docs for pin in JAX_PIN.findall(path.read_text())]
    pinned = [m.group(1) for r in requirements if (m := JAX_PIN.fullmatch(r))]
    assert quoted and set(quoted + pinned) == {TESTED_JAX}


def test_every_failure_names_the_missing_piece_and_an_apt_command():
    script = bootstrap_script(BootstrapPlan())
    assert "sudo apt-get install -y python3-pip" in script
    assert "sudo apt-get install -y python3.11 python3.11-venv" in script
    assert script.count('"kind": "bootstrap_failed"') == 4


def test_the_sandbox_runs_the_same_script_with_its_own_jax_pinned():
    plan = sandbox_plan()
    assert plan.requirement.startswith("jax==") and plan.python_request == "3.12"
    real = bootstrap_script(BootstrapPlan())
    practice = bootstrap_script(plan)
    quoted = real.replace(shlex.quote(TPU_REQUIREMENT), shlex.quote(plan.requirement))
    assert quoted.replace(TPU_REQUIREMENT, plan.requirement) == practice
