"""A labelled resource in an AI zone the ledger does not hold (issue 33): zone lists hide AI
zones unless the project turned visibility on, so the by-label scan of ``status`` and
``teardown`` looks in the catalog's AI zones as well; otherwise a TPU7x VM left in
us-central1-ai1a would bill unseen. The CLI runs in subprocesses against the sandbox."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import tpuwizard_cmd
from tests.integration.launch_helpers import env
from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.paths import owner_label
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread
from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

AI_ZONE = "us-central1-ai1a"


def leave_a_vm_in_the_ai_zone(cloud: ComputeCloud, owner: str) -> None:
    """A TPU7x VM of ``owner``'s, labelled, that no ledger line records (a crash before the
    ledger was written, or another computer's run)."""
    assert AI_ZONE not in cloud.list_zones()  # visibility off: the zone list hides it
    request = NodeRequest(
        AI_ZONE, "left-in-ai", parse_accelerator("tpu7x-8"), "run-ai", owner=owner, max_run_s=3600
    )
    cloud.wait_for_node(AI_ZONE, "left-in-ai", cloud.create_node(request), poll=0.05)


def test_the_by_label_scan_looks_in_hidden_ai_zones(tmp_path):
    from tpuwizard.core.launch.records.ledger import Ledger
    from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile

    server = make_server(tmp_path / "sandbox", delay=0.0)
    start_in_thread(server)
    try:
        cloud = ComputeCloud(PRACTICE_PROJECT, endpoint=server.endpoint, retry_deadline=10)
        leave_a_vm_in_the_ai_zone(cloud, "own1")
        ledger = Ledger(tmp_path / "ledger.jsonl")
        (found,) = reconcile(cloud, ledger, owner="own1")  # every zone: none named
        assert (found.resource.zone, found.source, found.billing) == (AI_ZONE, "labels", True)
        assert delete_and_verify(cloud, ledger, found.resource, pause=0.05).verified
        assert list(reconcile(cloud, ledger, owner="own1")) == []
    finally:
        server.shutdown()
        server.server_close()


def cli(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tpuwizard_cmd(*args, "--sandbox"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )


# Slow end-to-end (three CLI runs): a share runs per suite run (tests/rotation.py); the scan
# itself is proven above on every run.
@pytest.mark.rotating("real-tools-e2e")
def test_status_finds_and_teardown_ends_a_labelled_vm_in_a_hidden_ai_zone(tmp_path, home):
    server = make_server(home / "sandbox", delay=0.0)  # the state the CLI's sandbox will serve
    start_in_thread(server)
    try:
        cloud = ComputeCloud(PRACTICE_PROJECT, endpoint=server.endpoint, retry_deadline=10)
        leave_a_vm_in_the_ai_zone(cloud, owner_label())  # this install's
    finally:
        server.shutdown()
        server.server_close()
    # This install has used Compute Engine before (a run's record, long gone): without any
    # such record status asks Compute Engine nothing at all (issue 31), labels or not.
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.session.ledgers import ledger_for

    earlier = Resource(
        "node", PRACTICE_PROJECT, "us-east5-b", "earlier", "v6e-4", "run-0", backend="compute"
    )
    ledger_for(is_practice=True).record("gone", earlier)
    shown = cli(tmp_path, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    found = [(r["name"], r["zone"]) for r in json.loads(shown.stdout)["resources"]]
    assert found == [("left-in-ai", AI_ZONE)]
    ended = cli(tmp_path, "teardown", "--all", "--yes", "--json")
    assert ended.returncode == 0, ended.stderr
    results = json.loads(ended.stdout)["results"]
    assert [(r["name"], r["verified"]) for r in results] == [("left-in-ai", True)]
    assert json.loads(cli(tmp_path, "status", "--json").stdout)["resources"] == []
