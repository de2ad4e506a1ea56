"""What the wizard's screens and widgets read from their App, typed in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from tpuwizard.core.launch.records.billing_state import BillingState
    from tpuwizard.tui.state import WizardState


class WizardHost(Protocol):
    """The WizardApp as its screens see it (a test's harness App offers the same two)."""

    state: WizardState

    @property
    def billing(self) -> BillingState: ...


def host(node: MessagePump) -> WizardHost:
    """``node``'s App, as the wizard's: its state and what may bill now."""
    return cast("WizardHost", node.app)
