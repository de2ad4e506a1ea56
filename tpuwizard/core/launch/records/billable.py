"""Something that exists (or may) and may bill, as ``status``, the teardown and the wizard's
leftover check show it."""

from __future__ import annotations

from dataclasses import dataclass

from tpuwizard.core.cloud.tpu.states import bills_in_state
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan import cost


@dataclass(frozen=True)
class Billable:
    """Something that exists (or may) and may bill, as ``status`` shows it."""

    resource: Resource
    state: str
    age_s: float
    cost_usd: float | None
    source: str  # "ledger", "labels" or "ledger+labels"
    # Made by this install (its ledger knows it, or its owner label is ours). Others' resources
    # are shown apart and never deleted without their exact name and a confirmation.
    mine: bool = True
    kept: bool = False  # the ledger says the user kept it on purpose (``up``, Keep, --keep)
    # What its cloud says the state means (``Cloud.bills_in_state``, asked by reconcile); None
    # when made without a cloud at hand, and the TPU API's rule answers.
    bills: bool | None = None
    parts: tuple[str, ...] = ()  # what it is made of, where it has parts (NodeInfo.parts)

    @property
    def billing(self) -> bool:
        """Does it cost money now, by its state (the rule the quit guard and meter follow)?"""
        if self.bills is not None:
            return self.bills
        return bills_in_state(self.resource.kind, self.state)

    @property
    def cost_at_most_usd(self) -> float | None:
        """Where no price is known (Flex-start): the most it has cost, else its estimate."""
        if not self.billing:
            return 0.0
        r = self.resource
        return cost.at_most(r.slice, r.route, self.age_s, r.zone)

    def to_dict(self) -> dict[str, object]:
        r = self.resource
        return {
            "name": r.name,
            "kind": r.kind,
            "zone": r.zone,
            "project": r.project,
            "accelerator": r.accelerator,
            "route": r.route,
            "run_id": r.run_id,
            "state": self.state,
            "age_s": round(self.age_s, 1),
            "cost_usd": self.cost_usd,
            "cost_at_most_usd": self.cost_at_most_usd,
            "billing": self.billing,
            "source": self.source,
            "mine": self.mine,
            "owner": r.owner,
            "backend": r.backend,
            "parts": list(self.parts),
        }
