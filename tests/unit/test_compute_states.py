"""What a Compute Engine instance's status means for billing (issue 24, "States and billing"):
one rule, from the core, and an unknown status never hides a charge."""

from __future__ import annotations

import pytest

from tpuwizard.core.cloud.compute import states as compute_states


@pytest.mark.parametrize(
    ("state", "vm_bills", "disk_bills"),
    [
        ("PENDING", False, False),  # Flex-start waiting for capacity: nothing exists to bill
        ("PROVISIONING", False, True),  # the VM is not charged yet; its boot disk is
        ("STAGING", False, True),
        ("RUNNING", True, True),
        ("STOPPING", True, True),  # Google stopped it: no deadline any more, its disk bills
        ("STOPPED", True, True),
        ("TERMINATED", True, True),
        ("SUSPENDED", True, True),
        ("SOMETHING_NEW", True, True),  # unknown: billing
    ],
)
def test_what_each_status_means_for_billing(state, vm_bills, disk_bills):
    assert compute_states.bills_in_state("node", state) is vm_bills
    assert compute_states.disk_bills_in_state(state) is disk_bills


def test_a_stopped_instance_of_ours_is_one_to_delete():
    assert {"STOPPED", "TERMINATED", "SUSPENDED"} <= compute_states.STOPPED_STATES
    assert compute_states.READY_STATE not in compute_states.STOPPED_STATES


def test_the_compute_cloud_answers_with_the_rule():
    from tpuwizard.core.cloud.compute.client import ComputeCloud

    # The method, not an instance: bills_in_state uses no client.
    assert ComputeCloud.bills_in_state(None, "node", "STAGING") is False  # type: ignore[arg-type]
    assert ComputeCloud.bills_in_state(None, "node", "RUNNING") is True  # type: ignore[arg-type]
