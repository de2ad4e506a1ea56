"""What the wizard's screens, widgets and helpers use of their App, typed in one place: the
WizardApp is one, and a test's harness App offers what the screen it holds reads.

Its types are imported for the type checker alone: the first frame loads none of them."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete
    from textual.message_pump import MessagePump
    from textual.notifications import SeverityLevel
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.widget import AwaitMount
    from textual.worker import Worker

    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.core.launch.records.billing_state import BillingState
    from tpuwizard.session.launch_handle import LaunchHandle
    from tpuwizard.session.session import Session
    from tpuwizard.tui.state import WizardState

Result = TypeVar("Result")


class WizardHost(Protocol):
    """The WizardApp as its screens and helpers see it: the wizard's state, its session and
    launch, its ways out, and the few Textual calls they make on it."""

    state: WizardState
    force_sandbox: bool  # practice asked for on the command line
    handle: LaunchHandle | None  # the running launch, if any
    last_summary: RunSummary | None  # the last launch's: printed on the way out
    guard_open: bool  # a quit guard is on screen
    leaving: int | None  # the exit code, once a way out was chosen
    exiting: bool
    kept_beat_s: float | None  # the kept nodes' longest wait between heartbeats (None: 60 s)
    # The worker looking for earlier runs' resources beside the walk (tui/leftover_check.py).
    leftover_check: Worker[None] | None

    @property
    def billing(self) -> BillingState: ...

    @property
    def session(self) -> Session: ...  # made as the walk starts, before any step is shown

    @property
    def connecting(self) -> threading.Lock: ...  # one connect to the cloud at a time

    def start_leftover_check(self) -> Worker[None] | None: ...

    def start_heartbeats(self) -> None: ...

    def refresh_status(self) -> None: ...

    def finish(self, code: int, message: str | None = None) -> None: ...

    def goodbye(self, summary: RunSummary | None = None) -> str | None: ...

    def action_quit(self) -> None: ...

    # Textual's App, as far as the wizard's helpers call it.
    @property
    def screen(self) -> Screen[object]: ...

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...

    def push_screen(
        self,
        screen: Screen[Result],
        callback: ScreenResultCallbackType[Result] | None = None,
    ) -> AwaitMount: ...

    async def push_screen_wait(self, screen: Screen[Result]) -> Result: ...

    def switch_screen(self, screen: Screen[Any]) -> AwaitComplete: ...

    def pop_screen(self) -> AwaitComplete: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...


def host(node: MessagePump) -> WizardHost:
    """``node``'s App, as the wizard's: its state, its session and what may bill now."""
    return cast("WizardHost", node.app)
