"""The Route step's weekly Kaggle TPU quota: read through the session in a thread (a real read
asks Kaggle), then shown on the free notebook's card. Apart from the screen, which only shows it."""

from __future__ import annotations

import asyncio
from typing import Any


async def read_kaggle_quota(screen: Any, sandbox: bool) -> None:  # screen: the RouteScreen
    from tpuwizard.session.free.kaggle import practice_for_kaggle
    from tpuwizard.session.free.kaggle_quota import weekly_tpu_quota
    from tpuwizard.words.kaggle_text import quota_words

    def read() -> Any:
        return weekly_tpu_quota(practice_for_kaggle(sandbox))

    found = await asyncio.to_thread(read)
    # On the app's loop: a step left meanwhile has cancelled this worker, so nothing lands late.
    screen.kaggle_quota_read(quota_words(found))
