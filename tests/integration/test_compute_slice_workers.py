"""A Compute Engine slice's worker order is one order: worker i of the sandbox's workers route
(where it runs worker i's commands) is the VM whose address is the client's endpoint i."""

from __future__ import annotations

import itertools
import types
from pathlib import Path

import requests

from tpuwizard.core.cloud.compute.client import ComputeCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.sandbox.compute import migs
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread

ZONE, PROJECT = "us-east5-a", "practice-project"


def test_worker_i_is_the_same_vm_to_the_sandbox_and_to_the_client(tmp_path, monkeypatch):
    # The MIG names its VMs base-zzzz, base-yyyy, ... as it makes them: creation order is the
    # reverse of name order, so an order taken from either alone disagrees with the other.
    letters = itertools.chain.from_iterable(c * 4 for c in "zyxwvuts")
    monkeypatch.setattr(migs, "secrets", types.SimpleNamespace(choice=lambda _: next(letters)))
    server = make_server(tmp_path / "sandbox", delay=0.05)
    start_in_thread(server)
    try:
        cloud = ComputeCloud(PROJECT, endpoint=server.endpoint, retry_deadline=10)
        req = NodeRequest(
            zone=ZONE,
            node_id="tpu-order",
            slice=parse_accelerator("v6e-16"),
            run_id="run1",
            owner="own1",
            route="vm",
            max_run_s=3600,
        )
        op = cloud.create_node(req)
        node = cloud.wait_for_node(ZONE, req.node_id, op, timeout=120, poll=0.05)
        where = f"projects/{PROJECT}/zones/{ZONE}/instanceGroupManagers/{req.node_id}"
        answer = requests.get(f"{server.endpoint}/sandbox/v1/{where}:workers", timeout=30)
        assert answer.status_code == 200, answer.text
        vm_of_home = [Path(h).parent.name for h in answer.json()["homes"]]
        base = f"{server.endpoint}/compute/v1/projects/{PROJECT}/zones/{ZONE}/instances"
        address_of = {
            vm: requests.get(f"{base}/{vm}", timeout=30).json()["networkInterfaces"][0]["networkIP"]
            for vm in vm_of_home
        }
        assert len(vm_of_home) == 4
        assert [address_of[vm] for vm in vm_of_home] == list(node.endpoints)
    finally:
        server.shutdown()
        server.server_close()
