"""Two people on one sandbox, one node name (issue 39, item 2): Alice keeps ``dev2`` with ``up``;
Bob's ``launch --name dev2`` on a queued route (Flex-start, spot) is refused as a taken name, and
Alice's node, her work on it and her ledger are as they were. Each person has their own
TPUWIZARD_HOME (their own install, owner label and ledger) and both use one ``sandbox serve``,
as the README's shared-sandbox setup has it.

A drill: one route per suite run (tests/rotation.py), both over a few runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env
from tests.rotation import rotating
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

TOKEN = "shared-sandbox-token"
NODE = f"projects/tpuwizard-practice/locations/{ZONE}/nodes/dev2"


@pytest.fixture
def shared(tmp_path):
    """One sandbox that both people's CLIs reach (as `sandbox serve` serves it)."""
    server = make_server(tmp_path / "shared-sandbox", delay=0.3, token=TOKEN)
    start_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()


def person(tmp_path: Path, shared, name: str):
    """Run the CLI as ``name``: their own home and folder, the shared sandbox."""
    home, folder = tmp_path / f"{name}-home", tmp_path / name
    folder.mkdir()
    extra = {
        "TPUWIZARD_HOME": str(home),
        "TPUWIZARD_TPU_ENDPOINT": shared.endpoint,
        "TPUWIZARD_SANDBOX_TOKEN": TOKEN,
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            tpuwizard_cmd(*args),
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=240,
            env=env(**extra),
        )

    return cli


@pytest.mark.parametrize("route", rotating(["flex", "spot"], per_run=1))
def test_a_queued_launch_under_a_kept_nodes_name_leaves_that_node_alone(tmp_path, shared, route):
    alice, bob = person(tmp_path, shared, "alice"), person(tmp_path, shared, "bob")
    up = alice("up", "--sandbox", "--accelerator", "v5litepod-1", "--zone", ZONE, "--name", "dev2")
    assert up.returncode == 0, up.stderr
    made = shared.state.data["nodes"][NODE]

    launch = bob(
        "launch", "--sandbox", "--json", "--accelerator", "v5litepod-4", "--zone", ZONE,
        "--name", "dev2", "--route", route,
    )  # fmt: skip
    events = [json.loads(line) for line in launch.stdout.splitlines()]
    assert launch.returncode == 3, launch.stderr
    assert "The name is already taken" in launch.stderr
    names = [e["event"] for e in events]
    assert "resource_exists" not in names and "teardown_started" not in names  # nothing asked

    with shared.state.store.transaction():
        shared.state.tick()
        held = shared.state.data
        assert held["nodes"][NODE]["id"] == made["id"]  # the very node Alice kept
        assert held["nodes"][NODE]["state"] == "READY" and held["queued"] == {}
    status = json.loads(alice("status", "--sandbox", "--json").stdout)
    assert [k["name"] for k in status["kept"]] == ["dev2"]
    down = alice("down", "--sandbox", "dev2", "--yes")
    assert down.returncode == 0, down.stderr
