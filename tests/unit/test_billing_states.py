"""One rule for what bills: `status`, the quit guard and the meter agree on a node still being
made (issue "Every path keeps the promise", item 5)."""

from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud
from tests.unit.test_teardown import ZONE, created, node_resource, queued_resource
from tpuwizard.core.cloud.tpu.states import bills_in_state
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.verified import reconcile


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "ledger.jsonl")


@pytest.mark.parametrize(
    ("kind", "state", "bills"),
    [
        ("node", "CREATING", False),
        ("node", "READY", True),
        ("node", "SOMETHING_NEW", True),  # an unknown state never hides a charge
        ("queued", "WAITING_FOR_RESOURCES", False),
        ("queued", "ACTIVE", True),
    ],
)
def test_what_a_state_means_for_billing(kind, state, bills):
    assert bills_in_state(kind, state) is bills


def test_status_and_the_quit_guard_agree_on_a_node_being_made(ledger):
    cloud = MemoryCloud()
    resource = node_resource()
    created(cloud, ledger, resource)
    key = (ZONE, resource.name)
    cloud.nodes[key] = replace(cloud.nodes[key], state="CREATING")
    (found,) = reconcile(cloud, ledger, zones=[ZONE])
    assert found.cost_usd == 0.0 and not found.billing  # status: nothing charged yet
    billing = BillingState()
    billing.add_leftovers([found])
    (seen,) = billing.existing()
    assert seen.costing_since is None  # the guard: "not billing yet"
    assert billing.costing() == []


def test_a_ready_node_costs_in_status_and_in_the_guard(ledger):
    cloud = MemoryCloud()
    created(cloud, ledger, node_resource())
    (found,) = reconcile(cloud, ledger, zones=[ZONE])
    assert found.billing and found.cost_usd is not None
    billing = BillingState()
    billing.add_leftovers([found])
    assert len(billing.costing()) == 1


def test_a_queued_request_waiting_for_capacity_costs_nothing_in_status(ledger):
    cloud = MemoryCloud()
    resource = queued_resource()
    created(cloud, ledger, resource)
    key = (ZONE, resource.name)
    cloud.queued[key] = replace(cloud.queued[key], state="WAITING_FOR_RESOURCES")
    cloud.nodes.pop((ZONE, resource.node_id), None)
    (found,) = reconcile(cloud, ledger, zones=[ZONE])
    assert found.cost_usd == 0.0 and not found.billing
