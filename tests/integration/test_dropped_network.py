"""The sandbox's reset_create on each backend: the create is carried out, then the connection is
reset with no answer (a network that dropped after the request landed). The client sees a reset
(never "not sent"), and a launch finds what it made by reading, never creating it twice."""

from __future__ import annotations

import pytest
import requests

from tests.integration.compute_http import V6E_ZONE, Compute, tpu_vm
from tests.integration.launch_helpers import launch, ledger_all_gone
from tests.integration.test_compute_slice_launch import no_part_left
from tpuwizard.core.cloud.network_errors import network_failure, never_sent


def test_a_reset_create_lands_and_the_answer_is_a_reset_on_compute_engine(sandbox):
    server, _ = sandbox(faults="reset_create=1", delay=0.05)
    compute = Compute(server.endpoint)
    with pytest.raises(requests.ConnectionError) as err:
        compute.insert(tpu_vm("r-vm"))
    assert network_failure(err.value) and not never_sent(err.value)  # it may have landed
    assert compute.get("r-vm").status_code == 200  # ... and it did
    compute.insert(tpu_vm("r-two"))  # one create only: the next is answered


def test_a_reset_create_lands_and_the_answer_is_a_reset_on_the_tpu_api(sandbox):
    server, cloud = sandbox(faults="reset_create=1", delay=0.05)
    base = f"{server.endpoint}/v2/projects/practice-project/locations/us-central1-a/nodes"
    body = {"acceleratorType": "v5litepod-1", "runtimeVersion": "v2-alpha-tpuv5-lite"}
    with pytest.raises(requests.ConnectionError) as err:
        requests.post(base, params={"nodeId": "r-node"}, json=body, timeout=30)
    assert not never_sent(err.value)
    assert cloud.get_node("us-central1-a", "r-node") is not None


@pytest.mark.parametrize(
    "where",
    [("--backend", "compute", "--accelerator", "v6e-4", "--zone", V6E_ZONE)],
)
def test_a_launch_whose_create_answer_was_reset_finds_its_vm_and_ends_clean(tmp_path, home, where):
    code, events, stderr = launch(
        tmp_path, *where, where=(), TPUWIZARD_SANDBOX_FAULTS="reset_create=1"
    )
    assert code == 0, stderr
    names = [e["event"] for e in events]
    assert "create_refused" not in names and "teardown_verified" in names
    assert no_part_left(home) and ledger_all_gone(home)
