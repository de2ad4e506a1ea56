"""The quit guard says what ends a node kept on the way out as the parting line does: its
watchdog at its deadline once armed (it said "it bills until you delete it" beside a parting
line that named the watchdog's deadline), and only a delete when none is armed."""

from __future__ import annotations

import time

from textual.widgets import Static

from tests.tui.test_snapshots import NOW, Harness, billing_state, demo_billing
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.tui.screens.quit_guard import QuitGuard


async def guard_words(armed: bool) -> str:
    state, billing = billing_state(), demo_billing()
    state.apply(
        ev.Planned(
            "r",
            "tpuwizard-demo",
            "v5litepod-4",
            "us-central1-a",
            "vm",
            "p",
            4,
            1,
            4.8,
            120,
            True,
            "runs/r",
        )
    )
    state.apply(ev.Watchdog(armed, NOW + 7200, "armed"))
    app = Harness(lambda: QuitGuard(billing.existing(), billing.undecided()), state, (), billing)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        return " ".join(str(app.screen.query_one("#guard-text", Static).render()).split())


async def test_an_armed_watchdog_is_named_with_its_deadline():
    at = time.strftime("%H:%M", time.localtime(NOW + 7200))
    words = await guard_words(armed=True)
    assert f"until its watchdog deletes it at {at}, even if this laptop sleeps" in words
    assert "it runs until you delete it" in words and "bills" not in words  # practice


async def test_without_a_watchdog_only_a_delete_ends_it():
    words = await guard_words(armed=False)
    # A practice walk (billing_state's): it runs, and is not billed.
    assert "it runs until you delete it (practice: not billed)." in words
    assert "watchdog" not in words
