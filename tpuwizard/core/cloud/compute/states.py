"""What a Compute Engine instance's status means for billing: the one rule, as Google bills.

Statuses and their meaning are in compute-engine.md ("One VM", "Read back"); the rule:

- PENDING (a Flex-start create waiting for capacity): it exists, nothing is charged yet.
- PROVISIONING, STAGING: the VM is not charged yet, but its boot disk exists and is (a few cents
  an hour for 100 GB; the meter shows the VM's price, which is what matters, from RUNNING).
- RUNNING: charged. RUNNING is not "ready": readiness is still "the verifier passed".
- STOPPING, STOPPED, TERMINATED, SUSPENDING, SUSPENDED and every other status: counted as
  billing. A stopped VM's disk still bills, and Google clears its termination time when it stops
  (limit-vm-runtime), so nothing would end it; an unknown status must never hide a charge.

No imports: the kept-node lines read it at start-up, as they read the TPU API's (tpu/states.py).
"""

from __future__ import annotations

# Statuses in which the VM is not charged (its boot disk may be: see above), by resource kind.
# Compute Engine has no queued kind: spot and Flex-start are one instance (Cloud.queues).
NOT_BILLING_STATES = {
    # A slice (compute/slices.py) while its parts are made, and when only a template or a
    # policy is left: neither costs anything; its VMs bill from RUNNING as any VM's.
    "node": frozenset(
        {
            "PENDING",
            "PROVISIONING",
            "STAGING",
            "CREATING_POLICY",
            "CREATING_TEMPLATE",
            "CREATING_MIG",
            "RESIZING",
            "PARTS_LEFT",
        }
    ),
}
# Statuses of an instance of ours that Google stopped: no deadline any more and its disk bills,
# so the next command that sees one deletes it (issue 24, "States and billing").
STOPPED_STATES = frozenset({"STOPPING", "STOPPED", "TERMINATED", "SUSPENDING", "SUSPENDED"})
# Statuses on the way to RUNNING; anything else while waiting for RUNNING is a dead end.
STARTING_STATES = frozenset({"PENDING", "PROVISIONING", "STAGING"})
READY_STATE = "RUNNING"


def bills_in_state(kind: str, state: str) -> bool:
    """Does a Compute Engine resource of ``kind`` cost money while in ``state``?"""
    return state not in NOT_BILLING_STATES.get(kind, frozenset())


def disk_bills_in_state(state: str) -> bool:
    """Does the instance's boot disk cost money in ``state``? From PROVISIONING on, until the
    instance is deleted (the disk is deleted with it: ``autoDelete``)."""
    return state != "PENDING"
