"""What a TPU API resource's state means for billing: the one rule, as Google bills.

Node charges accrue while the node is READY; a queued resource waiting for capacity has no VM
(google-behaviour.md, "Billing"). Any other state counts as billing: an unknown state must never
hide a charge. No imports: the kept-node lines read it at start-up.
"""

from __future__ import annotations

# States in which nothing is charged, by resource kind ("node" or "queued").
NOT_BILLING_STATES = {
    "node": frozenset({"CREATING", "STOPPED", "PREEMPTED", "TERMINATED"}),
    "queued": frozenset(
        {"ACCEPTED", "WAITING_FOR_RESOURCES", "PROVISIONING", "CREATING", "FAILED", "SUSPENDED"}
    ),
}


def bills_in_state(kind: str, state: str) -> bool:
    """Does a resource of ``kind`` ("node" or "queued") cost money while in ``state``?"""
    return state not in NOT_BILLING_STATES.get(kind, frozenset())
