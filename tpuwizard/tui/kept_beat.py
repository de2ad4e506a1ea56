"""The open wizard keeps every kept node alive: heartbeats from a worker thread (the session's
:class:`~tpuwizard.session.kept.heartbeats.KeptHeartbeats`), problems shown as notices, and the
status bar refreshed when a heartbeat moves a deadline. They stop when the App exits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tpuwizard.session.kept.heartbeats import LONGEST_BEAT_S, KeptHeartbeats

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost


def start_heartbeats(app: WizardHost) -> KeptHeartbeats:
    """Start heartbeats for ``app.session``'s kept nodes; call on the App's event loop."""
    loop = asyncio.get_running_loop()

    def soon(callback: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        # Never blocks the heartbeat thread on the App (which may be exiting, or be joining it).
        with contextlib.suppress(RuntimeError):  # the loop has closed: the App is gone
            loop.call_soon_threadsafe(lambda: callback(*args, **kwargs))

    def problem(message: str) -> None:
        soon(app.notify, message, title="Kept node", severity="warning", timeout=10)

    longest = app.kept_beat_s if app.kept_beat_s is not None else LONGEST_BEAT_S
    return KeptHeartbeats(app.session, problem, lambda: soon(app.refresh_status), longest).start()
