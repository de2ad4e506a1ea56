"""Two people on one sandbox, one node name (issue 39, item 2): Alice keeps ``dev2`` with ``up``;
Bob's ``launch --name dev2`` on a queued route (Flex-start, spot) is refused as a taken name, and
Alice's node, her work on it and her ledger are as they were. Each person has their own
TPUWIZARD_HOME (their own install, owner label and ledger) and both use one ``sandbox serve``,
as the README's shared-sandbox setup has it.

A drill: one route per suite run (tests/rotation.py), both over a few runs.

And a home that holds another person's ledger record (issue 56, item 6: a copied or restored
home): Bob's `run` and `ssh` on Alice's kept node are refused by its owner label, as the cloud
returns it, before any SSH; her work folder stays as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env
from tests.rotation import rotating
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

TOKEN = "shared-sandbox-token"
ZONE_NODES = f"projects/tpuwizard-practice/locations/{ZONE}/nodes"
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


@pytest.mark.rotating("kept-node-e2e")
def test_a_copied_ledger_record_does_not_make_another_persons_node_yours(tmp_path, shared):
    alice, bob = person(tmp_path, shared, "alice"), person(tmp_path, shared, "bob")
    up = alice("up", "--sandbox", "--accelerator", "v5litepod-1", "--zone", ZONE, "--name", "a1")
    assert up.returncode == 0, up.stderr
    (tmp_path / "alice" / "alice_train.py").write_text("print('alice at work')\n")
    ran = alice("run", "--sandbox", "--node", "a1", "alice_train.py")
    assert ran.returncode == 0, ran.stderr
    work = shared.state.worker_home(f"{ZONE_NODES}/a1", 0) / ".tpuwizard" / "work"
    before = sorted(p.name for p in work.iterdir())
    assert "alice_train.py" in before

    (tmp_path / "bob-home" / "sandbox").mkdir(parents=True)  # Bob's home, with her ledger in it
    shutil.copy(
        tmp_path / "alice-home" / "sandbox" / "ledger.jsonl",
        tmp_path / "bob-home" / "sandbox" / "ledger.jsonl",
    )
    (tmp_path / "bob" / "short.py").write_text("print('bob')\n")
    for refused in (
        bob("run", "--sandbox", "--node", "a1", "short.py"),
        bob("ssh", "--sandbox", "--node", "a1"),
    ):
        said = " ".join(refused.stderr.split())
        assert refused.returncode == 2, refused.stderr
        assert f"a1 in {ZONE} is not yours: its owner label is " in said
        assert "nothing was copied to it or run on it" in said and "Traceback" not in said
    assert sorted(p.name for p in work.iterdir()) == before  # her work folder as it was

    down = alice("down", "--sandbox", "a1", "--yes")
    assert down.returncode == 0, down.stderr
