"""The sandbox's workers run Google's image (google-behaviour.md "On the VM"): Python 3.10
without venv and without uv; the bootstrap reaches a modern JAX only through uv, and says what is
missing when it cannot. Each test drives the real client and the real bootstrap script."""

import json
import shlex

import pytest

from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.bootstrap import (
    BootstrapPlan,
    bootstrap_script,
    sandbox_plan,
    unpinned_jax,
)
from tpuwizard.core.remote.transports import LocalTransport
from tpuwizard.sandbox.model import worker_home
from tpuwizard.sandbox.workers.image import worker_path

ZONE = "us-central1-a"


def worker(sandbox, external=True, node_id="img"):
    server, cloud = sandbox(delay=0)
    request = NodeRequest(
        zone=ZONE,
        node_id=node_id,
        slice=parse_accelerator("v5litepod-4"),
        run_id="20261130-010000-ab12",
        external_ips=external,
    )
    node = cloud.wait_for_node(ZONE, node_id, cloud.create_node(request), poll=0.05)
    home = worker_home(server.state.home, cloud.node_path(ZONE, node.name), 0)
    return LocalTransport([home], worker_path(home.parent))


def markers(text):
    return [json.loads(line[10:]) for line in text.splitlines() if line.startswith("TPUWIZARD ")]


def test_the_worker_python_is_310_without_venv_and_there_is_no_uv(sandbox):
    vm = worker(sandbox)
    assert vm.run(0, "python3 --version").stdout.strip() == "Python 3.10.12"
    made = vm.run(0, "python3 -m venv v")
    assert made.code != 0 and "apt install python3.10-venv" in made.stderr
    assert vm.run(0, "command -v uv").code != 0
    # uv arrives the way it would on the VM: pip --user into ~/.local/bin.
    assert vm.run(0, "python3 -m pip install --quiet --user uv").code == 0
    assert vm.run(0, "~/.local/bin/uv --version").stdout.startswith("uv ")


def test_bootstrap_builds_the_venv_with_uv_on_a_managed_python(sandbox):
    vm = worker(sandbox)
    plan = sandbox_plan()
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(plan))}")
    assert result.code == 0, result.stdout + result.stderr
    assert "installing uv with pip --user" in result.stdout
    versions = markers(result.stdout)[-1]
    assert versions["kind"] == "versions" and versions["jax"] == plan.pinned_jax
    assert versions["requested"] == plan.requirement
    assert tuple(int(p) for p in versions["python"].split(".")[:2]) >= (3, 11)


def test_a_jax_that_cannot_be_had_fails_and_never_falls_back(sandbox):
    vm = worker(sandbox)
    plan = BootstrapPlan(requirement="jax==0.0.1")  # not in this environment: offline, absent
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(plan))}")
    assert result.code != 0
    (failure,) = markers(result.stdout)
    assert failure["kind"] == "bootstrap_failed" and "jax==0.0.1" in failure["missing"]
    assert vm.run(0, "test -e .tpuwizard/venv").code != 0  # no half-built venv stays behind


def test_a_worker_without_external_address_cannot_reach_package_indexes(sandbox):
    vm = worker(sandbox, external=False)
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(sandbox_plan()))}")
    assert result.code != 0
    assert "Network is unreachable" in result.stderr
    (failure,) = markers(result.stdout)
    assert "cannot reach PyPI" in failure["missing"] and "--internal-ips" in failure["fix"]


def test_without_pip_the_diagnosis_names_the_apt_command(sandbox, tmp_path):
    vm = worker(sandbox)
    # A leaner image whose python3 has no pip: a folder ahead of the image's bin on PATH.
    lean = tmp_path / "lean"
    lean.mkdir()
    image_python = vm.path.split(":")[0] + "/python3"
    (lean / "python3").write_text(
        '#!/bin/bash\n[ "${1:-}" = -m ] && [ "${2:-}" = pip ] && '
        '{ echo "/usr/bin/python3: No module named pip" >&2; exit 1; }\n'
        f'exec {image_python} "$@"\n'
    )
    (lean / "python3").chmod(0o755)
    vm.path = f"{lean}:{vm.path}"
    result = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(sandbox_plan()))}")
    assert result.code != 0
    (failure,) = markers(result.stdout)
    assert "pip is missing" in failure["missing"]
    assert failure["fix"] == "sudo apt-get update && sudo apt-get install -y python3-pip"


def test_the_sandbox_offers_v2_and_v3_pods_only_where_google_has_them(sandbox):
    from google.api_core import exceptions as gx

    _, cloud = sandbox(delay=0)
    assert "v2-32" in cloud.accelerator_types("us-central1-a")
    assert "v2-8" not in cloud.accelerator_types("us-central1-a")
    assert "v2-32" not in cloud.accelerator_types("us-central1-b")
    assert "v3-32" not in cloud.accelerator_types("us-central1-a")
    assert "v3-2048" in cloud.accelerator_types("europe-west4-a")
    request = NodeRequest(zone=ZONE, node_id="pod", slice=parse_accelerator("v3-32"), run_id="r1")
    with pytest.raises(gx.BadRequest, match="not available in zone us-central1-a"):
        cloud.create_node(request)


def test_a_worker_answers_before_the_api_reports_ready(sandbox):
    """google-behaviour.md:49 (marin#6087): reachable while the API still says CREATING; the
    client goes by the API, so billing and the launch start at READY, not at first contact."""
    server, cloud = sandbox(delay=1.0)
    request = NodeRequest(
        zone=ZONE, node_id="early", slice=parse_accelerator("v5litepod-4"), run_id="r1"
    )
    op = cloud.create_node(request)
    home = worker_home(server.state.home, cloud.node_path(ZONE, "early"), 0)
    answered_while_creating = False
    while (node := cloud.get_node(ZONE, "early")) is not None and node.state == "CREATING":
        if home.is_dir():
            vm = LocalTransport([home], worker_path(home.parent))
            answered_while_creating = vm.run(0, "python3 --version").code == 0
            break
    assert answered_while_creating
    assert cloud.wait_for_node(ZONE, "early", op, poll=0.05).state == "READY"


def test_a_venv_left_with_another_jax_is_refused_not_used(sandbox):
    """A worker that kept a venv from an earlier launch reports what it has; a pin that differs
    stops the launch instead of running on an untested JAX."""
    vm = worker(sandbox)
    built = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(sandbox_plan()))}")
    assert built.code == 0, built.stderr
    newer = BootstrapPlan(requirement="jax==99.0")
    again = vm.run(0, f"bash -c {shlex.quote(bootstrap_script(newer))}")
    assert again.code == 0 and "venv already present" in again.stdout
    versions = markers(again.stdout)[-1]
    assert versions["requested"] == "jax==99.0" and versions["jax"] == sandbox_plan().pinned_jax
    problem = unpinned_jax(newer, {0: versions})
    assert problem and "worker 0 has jax" in problem and "jax 99.0" in problem
    assert unpinned_jax(sandbox_plan(), {0: versions}) is None
