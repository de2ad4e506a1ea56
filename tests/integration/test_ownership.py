"""Two people share a project (issue 17, item 3): Bob's status shows Alice's kept run apart, his
``teardown --all`` leaves it, and deleting it takes its exact name and a confirmation. The CLI
runs in subprocesses against the sandbox, as a user runs it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import ZONE, env
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

# Slow end-to-end: a share runs per suite run (tests/rotation.py, conftest.ROTATING_PER_RUN).
pytestmark = pytest.mark.rotating("real-tools-e2e")

ALICE = "a11ce0000000000a"


def alice_keeps_a_node(home) -> None:
    """Alice's kept run, in the sandbox state this home's CLI will serve."""
    server = make_server(home / "sandbox", delay=0.0)
    start_in_thread(server)
    try:
        cloud = TpuCloud("tpuwizard-practice", endpoint=server.endpoint)
        cloud.create_node(
            NodeRequest(ZONE, "alices-run", parse_accelerator("v5litepod-1"), "run-a", owner=ALICE)
        )
        cloud.wait_for_node(ZONE, "alices-run", poll=0.05, timeout=30)
    finally:
        server.shutdown()
        server.server_close()


def cli(tmp_path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tpuwizard_cmd(*args, "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
        input=stdin,
    )


def test_another_owners_node_is_shown_apart_and_survives_teardown_all(tmp_path, home):
    alice_keeps_a_node(home)
    shown = json.loads(cli(tmp_path, "status", "--json").stdout)
    assert shown["resources"] == []
    assert [(r["name"], r["mine"], r["owner"]) for r in shown["others"]] == [
        ("alices-run", False, ALICE)
    ]
    text = cli(tmp_path, "status")
    assert "another tpuwizard user" in text.stdout + text.stderr

    bob = cli(tmp_path, "teardown", "--all", "--yes", "--json")
    assert bob.returncode == 0, bob.stderr
    assert json.loads(bob.stdout)["results"] == []
    assert "Left alone: alices-run" in bob.stderr

    # By name, --yes alone is not enough without a terminal; --other-owner confirms it.
    refused = cli(tmp_path, "teardown", "alices-run", "--yes")
    assert refused.returncode == 2 and "--other-owner" in refused.stderr
    still = json.loads(cli(tmp_path, "status", "--json").stdout)["others"]
    assert [r["name"] for r in still] == ["alices-run"]

    gone = cli(tmp_path, "teardown", "alices-run", "--yes", "--other-owner", "--json")
    assert gone.returncode == 0, gone.stderr
    assert [r["verified"] for r in json.loads(gone.stdout)["results"]] == [True]
    assert json.loads(cli(tmp_path, "status", "--json").stdout)["others"] == []


def test_reusing_the_name_of_a_kept_node_neither_deletes_it_nor_records_it_gone(tmp_path, home):
    from tests.integration.launch_helpers import launch
    from tpuwizard.core.launch.records.ledger import Ledger

    code, first, err = launch(tmp_path, "--accelerator", "v5litepod-1", "--name", "kept", "--keep")
    assert code == 0, err
    code, second, err = launch(tmp_path, "--accelerator", "v5litepod-1", "--name", "kept")
    assert code == 3, err
    kinds = [e["event"] for e in second]
    assert "create_refused" in kinds and "teardown_started" not in kinds
    shown = json.loads(cli(tmp_path, "status", "--json").stdout)["resources"]
    assert [(r["name"], r["state"]) for r in shown] == [("kept", "READY")]
    ops = {e.resource.run_id: e.op for e in Ledger(home / "sandbox" / "ledger.jsonl").entries()}
    assert ops == {first[0]["run_id"]: "kept", second[0]["run_id"]: "gone"}
    assert cli(tmp_path, "teardown", "--all", "--yes").returncode == 0


def test_status_names_an_unreadable_ledger_line_and_still_answers(tmp_path, home):
    ledger = home / "sandbox" / "ledger.jsonl"
    ledger.parent.mkdir(parents=True)
    ledger.write_bytes(b'{"op": "created", "name": "a/b"}\n\xff\n')
    shown = cli(tmp_path, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    assert [d["line"] for d in json.loads(shown.stdout)["unreadable_ledger_lines"]] == [1, 2]
    assert "Ledger line 2 could not be read (not UTF-8)" in shown.stderr
    assert str(ledger) + ".unreadable" in shown.stderr
