"""The leftover check beside the first step (what earlier runs left that may still bill), and
the cloud chosen on Account opened after it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING

from textual.worker import WorkerCancelled

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost


def connect(app: WizardHost) -> None:
    """Point the session at the mode and project chosen, and open the cloud."""
    with app.connecting:  # the leftover check's and the walk's: one at a time
        app.session.switch(app.state.practice, app.state.project)
        app.state.project = app.session.project
        assert app.session.cloud is not None


async def connect_after_leftovers(app: WizardHost, connected: threading.Event) -> None:
    """Open the cloud chosen on Account beside the walk (Capacity needs none), after the
    leftover check, which connects too: one connect at a time. ``connected`` is set then,
    however it ends (a failed open is the Zones step's to say). Then the Billing Catalog is
    read for the cloud chosen (its figures replace the offline table's where they land)."""
    from tpuwizard.session.prices import reading_prices
    from tpuwizard.tui.price_read import read_prices

    reading_prices()
    try:
        check = app.start_leftover_check()
        if check is not None:
            with contextlib.suppress(WorkerCancelled):  # the wizard is closing
                await check.wait()
        await asyncio.to_thread(connect, app)
    finally:
        connected.set()
    await read_prices(app)


async def offer_leftovers(app: WizardHost) -> None:
    """Look for what earlier runs left billing, and offer to delete it (Delete now or leave
    it running); a zone that cannot be checked is said, never taken for nothing there."""
    from tpuwizard.tui.screens.leftovers import LeftoversScreen
    from tpuwizard.words.event_text import unchecked_text

    try:
        await asyncio.to_thread(connect, app)
        found = await asyncio.to_thread(app.session.find_leftovers)
    except Exception as err:  # no project yet, or no network: the walk goes on
        app.session.billing.leftover_check_failed()
        app.refresh_status()
        app.notify(f"Could not check for leftovers: {err}", severity="warning")
        app.start_heartbeats()
        return
    # Not reached when the wizard closed meanwhile (the worker is cancelled): nothing to beat.
    app.start_heartbeats()
    app.refresh_status()
    for item in found.unchecked:  # a zone that refused: said, never taken for "nothing there"
        text = unchecked_text(item.resource, item.diagnosis, "wizard", app.session.practice)
        app.notify(text, severity="warning", timeout=30)
    left = [b for b in found if not b.kept]  # kept on purpose: the status bar shows them
    if not left:
        return
    if await app.push_screen_wait(LeftoversScreen(left)):
        results = await asyncio.to_thread(app.session.delete, [b.resource for b in left])
        for result in results:
            word = "verified gone" if result.verified else "NOT verified gone"
            app.notify(
                f"{result.resource.name}: {word}",
                severity="information" if result.verified else "error",
            )
    else:
        app.session.leave([b.resource.name for b in left])
    app.refresh_status()
