"""The exact commands a real TPU VM runs to set up JAX, checked as text (no VM here)."""

import re
import shlex
import tomllib

from tests.conftest import REPO
from tpuwizard.core.plan import jax_versions
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


def test_pyproject_pins_the_newest_jax_its_python_installs_and_the_docs_quote_the_table():
    """TESTED_JAX (the table's default) is what workers install; pyproject's own jax (which
    cannot import it) is the newest version of the table its least Python installs (0.11 and
    later need 3.12), in both its requirements. Every pin the docs quote is in the table, and
    the packages guide and the safety page quote the default, so a bump missing one fails."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].values()
    requirements = [*project["dependencies"], *(r for extra in extras for r in extra)]
    least = tuple(int(n) for n in project["requires-python"].removeprefix(">=").split("."))
    own = [v.version for v in jax_versions.TABLE if v.min_python <= least][-1]
    assert f"jax=={own}" in requirements and f"jax[tpu]=={own}" in requirements
    pinned = {m.group(1) for r in requirements if (m := JAX_PIN.fullmatch(r))}
    assert pinned == {own}
    assert jax_versions.DEFAULT.version == TESTED_JAX
    docs = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "scripts").glob("*.sh")]
    quoted = {pin for path in docs for pin in JAX_PIN.findall(path.read_text())}
    assert quoted and quoted <= set(jax_versions.versions())
    for page in ("docs/guides/packages.md", "docs/concepts/safety.md"):
        assert f"jax[tpu]=={TESTED_JAX}" in (REPO / page).read_text(), page


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
