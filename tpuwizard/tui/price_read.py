"""The Billing Catalog read beside the walk: the offline table's figures, marked, stand until it
lands (no screen waits for it), then every screen that shows a price redraws with the catalog's
(or with why it could not be read)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpuwizard.tui.host import WizardHost


async def read_prices(app: WizardHost) -> None:
    """Read (or take the cached read of) the catalog for the session's cloud off the UI thread,
    then tell each screen on the stack that shows prices (``prices_changed``)."""
    from tpuwizard.session.prices import catalog_prices, use_prices

    prices = await asyncio.to_thread(catalog_prices, app.session)
    # Installed here, on the app's loop: a wizard closed meanwhile has cancelled this worker,
    # so a read that lands after it never reprices anything.
    use_prices(prices)
    for screen in app.screen_stack:
        redraw = getattr(screen, "prices_changed", None)
        if redraw is not None:
            redraw()
    app.refresh_status()  # the meter's figures are the catalog's now
