"""Packages for the worker venv: the rules before create, the install under the pinned JAX, what
uv's failure means, and a script's ModuleNotFoundError named as the package that adds it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.plans import launch_plan
from tpuwizard.core.cloud.diagnose.remote import remote_diagnosis
from tpuwizard.core.errors import BadInput, PackagesFailed, ScriptFailed
from tpuwizard.core.launch.plan.packages import (
    COURSE_PACKAGES,
    PackageSpec,
    gather_packages,
    package_names,
    package_problems,
    read_requirements,
    specs_from_field,
)
from tpuwizard.core.launch.workers.missing_module import MissingModuleWatch, package_for
from tpuwizard.core.plan.jax_versions import DEFAULT
from tpuwizard.core.remote.bootstrap import BootstrapPlan, bootstrap_script
from tpuwizard.core.remote.packages import install_commands, install_failure
from tpuwizard.sandbox.workers.tools import UV_NO_ROUTE
from tpuwizard.words.choice_words import all_words


def spec(text: str) -> PackageSpec:
    return PackageSpec(text, "--with")


@pytest.mark.parametrize(
    "text",
    [
        "jax",
        "JAX[tpu]>=0.4",
        "jaxlib==0.4.30",
        "libtpu",
        "libtpu_nightly",
        "Jax ; python_version>'3'",
    ],
)
def test_a_requirement_naming_jax_jaxlib_or_libtpu_is_refused_with_the_reason(text):
    (problem,) = all_words(package_problems([spec(text)]), "cli")
    assert "names " in problem and "jax[tpu]==" in problem and "Remove that line" in problem


@pytest.mark.parametrize("text", ["-e .", "--index-url https://x.example", "-r other.txt", "a b"])
def test_options_and_odd_lines_are_not_requirements(text):
    (problem,) = all_words(package_problems([spec(text)]), "cli")
    assert "is not a package requirement" in problem


@pytest.mark.parametrize(
    "text",
    [
        "optax",
        "flax>=0.8,<0.11",
        "orbax-checkpoint; python_version >= '3.10'",
        "tiny_pkg[extra]~=1.0",
        "tinypkg @ https://files.example/tinypkg-0.3.1-py3-none-any.whl",
        "tinypkg @ git+https://github.com/example/tinypkg",
        *COURSE_PACKAGES,
    ],
)
def test_ordinary_requirements_pass(text):
    assert package_problems([spec(text)]) == []


# -- issue 48, item 8: a direct reference to this computer is refused before any create --------
@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("numpy @ file:///etc/passwd", "file:///etc/passwd"),
        ("tinypkg @ file:///tmp/tinypkg-0.3.1-py3-none-any.whl", "file:///tmp/tinypkg"),
        ("numpy@/etc/passwd", "/etc/passwd"),
        ("numpy @ ./wheels/numpy.whl", "./wheels/numpy.whl"),
        ("tinypkg @ git+file:///home/me/tinypkg", "git+file:///home/me/tinypkg"),
        ("tinypkg @ http://localhost:8000/t.whl", "http://localhost:8000/t.whl"),
        ("tinypkg @ http://127.0.0.1:8000/t.whl", "http://127.0.0.1:8000/t.whl"),
        ("tinypkg @ http://[::1]/t.whl", "http://[::1]/t.whl"),
    ],
)
def test_a_direct_reference_to_this_computer_is_refused(text, where):
    (problem,) = all_words(package_problems([spec(text)]), "cli")
    assert where in problem and "a file or address of this computer" in problem, problem
    assert "the TPU VM installs its packages itself, and it is not there" in problem


def test_the_plan_refuses_a_jax_line_from_a_file_and_says_which_line(tmp_path):
    requirements = tmp_path / "reqs.txt"
    requirements.write_text("# the course's\noptax  # optimisers\n\njax[tpu]\n")
    specs = read_requirements(requirements)
    assert [(s.text, s.origin) for s in specs] == [
        ("optax", "reqs.txt line 2"),
        ("jax[tpu]", "reqs.txt line 4"),
    ]
    plan = launch_plan(
        "v5litepod-4", "us-central1-a", "p-123456", "r", tmp_path, packages=tuple(specs)
    )
    problems = [str(p) for p in plan.problems()]
    assert any("'jax[tpu]' (reqs.txt line 4) names jax" in p for p in problems), problems


def test_a_missing_requirements_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="No requirements file at"):
        gather_packages([], [tmp_path / "nope.txt"])


def test_a_requirements_txt_beside_the_script_is_used_and_said_once(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("")
    beside = tmp_path / "requirements.txt"
    beside.write_text("tinypkg\n")
    request = gather_packages(["optax"], [], script)
    assert [s.text for s in request.specs] == ["optax", "tinypkg"]
    assert request.auto_file == beside
    said = request.auto_words()
    assert said is not None and "requirements.txt" in said and "tinypkg" in said
    named = gather_packages([], [beside], script)  # named with --requirements: not twice
    assert [s.text for s in named.specs] == ["tinypkg"] and named.auto_words() is None
    assert gather_packages([], [], tmp_path / "elsewhere" / "x.py").specs == ()


def test_the_packages_field_reads_spaces_and_trailing_commas():
    assert [s.text for s in specs_from_field("optax, flax>=0.8,<0.9  numpy")] == [
        "optax",
        "flax>=0.8,<0.9",
        "numpy",
    ]
    assert package_names(specs_from_field("Orbax_Checkpoint optax orbax-checkpoint")) == [
        "orbax-checkpoint",
        "optax",
    ]


def test_the_bootstrap_installs_them_under_a_constraint_before_reporting_versions():
    script = bootstrap_script(BootstrapPlan(), install_commands(["optax", "a b'c"]), ["optax"])
    install = script.index("uv pip install --python .tpuwizard/venv/bin/python -r ")
    assert "-c .tpuwizard/held-by-tpuwizard.txt" in script[install:]
    assert install > script.index("jax[tpu]==")  # after the pinned JAX
    assert script.index('"$venv/bin/python" -c') > install  # the versions line comes last
    pinned = f"'jax[tpu]=={DEFAULT.version}' optax"
    assert script.rstrip().endswith(pinned)  # its version is reported
    assert "'a b'\"'\"'c'" in script  # every spec quoted for the shell
    assert install_commands([]) == []


def test_the_install_really_holds_jax_and_reports_failure(tmp_path):
    """The install lines run by bash against a stand-in uv and venv python: the constraint file
    holds what the venv has, and a failing uv prints the marker."""
    home = tmp_path
    venv_bin = home / ".tpuwizard" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text("#!/bin/sh\necho jax==0.10.2; echo jaxlib==0.10.2\n")
    tools = home / ".local" / "bin"
    tools.mkdir(parents=True)
    (tools / "uv").write_text('#!/bin/sh\necho "uv $*"; exit ${UV_EXIT:-0}\n')
    for tool in (venv_bin / "python", tools / "uv"):
        tool.chmod(0o755)
    script = "\n".join(install_commands(["optax"]))
    ok = subprocess.run(
        ["bash", "-c", script],
        cwd=home,
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert ok.returncode == 0, ok.stderr
    assert (
        home / ".tpuwizard" / "held-by-tpuwizard.txt"
    ).read_text() == "jax==0.10.2\njaxlib==0.10.2\n"
    assert (home / ".tpuwizard" / "added-packages.txt").read_text() == "optax\n"
    failed = subprocess.run(
        ["bash", "-c", script],
        cwd=home,
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "UV_EXIT": "1"},
    )
    assert failed.returncode == 1 and 'TPUWIZARD {"kind": "packages_failed"}' in failed.stdout


def test_a_package_the_sandbox_lacks_reads_as_googles_no_route():
    lines = [
        "Using Python 3.12 environment at: .tpuwizard/venv",
        *UV_NO_ROUTE.format(name="optax").splitlines(),
    ]
    failure = install_failure(lines, ["optax"], 1)
    assert failure.kind == "no_route"
    assert "cannot reach PyPI" in failure.why and "external IPs" in failure.fix


def test_uv_saying_a_name_is_not_on_pypi_says_check_the_name():
    lines = [
        "error: No solution found when resolving dependencies",
        "  cause: Because optaxx was not found in the package registry and you require optaxx, "
        "we can conclude that your requirements are unsatisfiable.",
    ]
    failure = install_failure(lines, ["optaxx"], 1)
    assert failure.kind == "not_found" and "optaxx" in failure.why


def test_a_conflict_with_the_pinned_jax_is_named_as_such():
    lines = [
        "error: No solution found when resolving dependencies",
        "  cause: Because all versions of flax depend on jax>=99 and jax==0.10.2, we can "
        "conclude that all versions of flax cannot be used.",
    ]
    failure = install_failure(lines, ["flax"], 1)
    assert failure.kind == "conflict" and f"pinned jax[tpu]=={DEFAULT.version}" in failure.why
    assert "jax>=99" in failure.why
    other = install_failure(
        ["error: No solution found when resolving dependencies", "  cause: a and b"], ["a", "b"], 1
    )
    assert other.kind == "conflict" and "together" in other.why


def test_packages_failed_becomes_a_diagnosis_before_the_script():
    err = PackagesFailed(0, "conflict", "flax cannot be installed beside it", "leave it out")
    d = remote_diagnosis(err, str(err))
    assert d is not None and d.kind == "packages_failed"
    assert "Your script did not run" in d.explanation


@pytest.mark.parametrize(
    ("line", "module", "package"),
    [
        ("ModuleNotFoundError: No module named 'optax'", "optax", "optax"),
        (
            "ModuleNotFoundError: No module named 'orbax.checkpoint'",
            "orbax.checkpoint",
            "orbax-checkpoint",
        ),
        ("[w1] ModuleNotFoundError: No module named 'sklearn'", "sklearn", "scikit-learn"),
        ("ModuleNotFoundError: No module named 'jax'", "jax", None),
    ],
)
def test_a_missing_module_is_read_from_the_scripts_lines(line, module, package):
    watch = MissingModuleWatch()
    for text in (
        "Traceback (most recent call last):",
        line,
        "ModuleNotFoundError: No module named 'x'",
    ):
        watch.see(text)
    assert (watch.module, watch.package) == (module, package)


def test_a_module_beside_the_script_is_the_scripts_own(tmp_path):
    (tmp_path / "helper.py").write_text("")
    assert package_for("helper", tmp_path) is None
    assert package_for("optax", tmp_path) == "optax"


def test_the_diagnosis_names_the_flag_that_adds_the_package():
    err = ScriptFailed(1, "orbax.checkpoint", "orbax-checkpoint")
    d = remote_diagnosis(err, str(err))
    assert d is not None and d.kind == "missing_package"
    assert "orbax-checkpoint" in d.title and "'orbax.checkpoint'" in d.explanation
    cli = " ".join(all_words(d.next_steps, "cli"))
    assert "--with orbax-checkpoint" in cli and "before the script's name" in cli
    assert '"Packages" field on Review' in " ".join(all_words(d.next_steps, "wizard"))
    assert "requirements.txt" in " ".join(all_words(d.next_steps, "plain"))
    plain_failure = remote_diagnosis(ScriptFailed(1), "x")
    assert plain_failure is not None and plain_failure.kind == "script_failed"


def test_the_sandbox_wheel_folder_is_named_by_its_variable(tmp_path, monkeypatch):
    from tpuwizard.sandbox.workers.image import WHEELS_ENV, wheel_folder

    monkeypatch.delenv(WHEELS_ENV, raising=False)
    assert wheel_folder(tmp_path) == tmp_path / "wheels"
    monkeypatch.setenv(WHEELS_ENV, str(tmp_path / "mine"))
    assert wheel_folder(tmp_path) == Path(tmp_path / "mine")


def test_a_practice_worker_downloads_from_the_index_this_computer_s_pip_names():
    from tpuwizard.sandbox.workers.image import PYPI, parse_pip_config

    assert parse_pip_config("") == {"index-url": [PYPI]}  # nothing set: PyPI, as pip does
    listed = (
        "global.index-url='https://mirror.example/simple'\n"
        "global.extra-index-url='file:///a/simple file:///b/simple'\n"
        "global.cert='/etc/ssl/certs/ca.crt'\n"
        "download.index-url='https://not-for-installs.example'\n"
        ":env:.index-url='http://127.0.0.1:8080/simple'\n"  # the environment wins, as in pip
        ":env:.find-links=''\n"
    )
    assert parse_pip_config(listed) == {
        "index-url": ["http://127.0.0.1:8080/simple"],
        "extra-index-url": ["file:///a/simple", "file:///b/simple"],
        "find-links": [],
    }


@pytest.mark.parametrize(
    "text",
    ["foo; touch MARKER", "foo>=1 bar", "foo[bar", "foo ==", "foo; os_name == posix", "foo @"],
)
def test_a_line_that_is_not_pep_508_is_not_a_requirement(text):
    (problem,) = all_words(package_problems([spec(text)]), "cli")
    assert "is not a package requirement" in problem


def test_a_requirements_file_over_the_limit_is_refused_after_reading_only_the_limit(tmp_path):
    from tpuwizard.core.launch.plan.packages import MAX_REQUIREMENTS_BYTES

    big = tmp_path / "big.txt"
    big.write_text("optax\n" * (MAX_REQUIREMENTS_BYTES // 6 + 1))
    with pytest.raises(BadInput, match="larger than 1024 KiB"):
        read_requirements(big)
    big.write_text("optax\n" * (MAX_REQUIREMENTS_BYTES // 6))
    assert len(read_requirements(big)) == MAX_REQUIREMENTS_BYTES // 6


def test_a_folder_as_requirements_is_not_a_regular_file(tmp_path):
    with pytest.raises(BadInput, match="is not a regular file"):
        read_requirements(tmp_path)
