"""The quit guard says what ends a node kept on the way out as the parting line does: its
watchdog at its deadline once armed (it said "it bills until you delete it" beside a parting
line that named the watchdog's deadline), and only a delete when none is armed."""

from __future__ import annotations

import time

from textual.widgets import Static

from tests.tui.test_snapshots import NOW, Harness, billing_state, demo_billing
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billing_state import BillingState
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


async def test_a_kept_node_says_its_end_sentence_once_and_leaves_the_guard_when_gone():
    """Issue 52, item C: the guard over a node kept earlier says its end sentence's facts
    (words/kept_end.py), not a countdown; once a heartbeat drops the node (its zone's listing
    lacks it), its row and figure go, the guard says so, and quitting keeps nothing."""
    from textual.widgets import Button

    from tpuwizard.core.launch.records.billing_state import Billed
    from tpuwizard.words.kept_text import billed_end_sentence

    at = NOW + 3600
    billing = BillingState()
    billing.note_kept(
        Billed(
            "tpuwizard-old",
            "node",
            "us-central1-a",
            "v5litepod-1",
            "vm",
            NOW - 60,
            NOW - 60,
            state="READY",
            kept_since=NOW - 60,
            idle_s=1800.0,
            max_deadline=at,
            last_heartbeat=NOW,
        )
    )
    (node,) = billing.existing()
    end = billed_end_sentence(node, practice=True)
    app = Harness(lambda: QuitGuard(billing.existing(), billing.undecided()), None, (), billing)
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        guard = app.screen

        def text() -> str:
            return " ".join(str(guard.query_one("#guard-text", Static).render()).split())

        words = text()
        assert words.count(end) == 1, words
        assert "You chose to leave these running" in words and "if it were real" in words
        assert "unless it is used" not in words and "deadline in" not in words
        billing.forget("tpuwizard-old")  # a heartbeat found it gone
        guard.tick()
        await pilot.pause()
        words = text()
        assert "tpuwizard-old no longer exists" in words and "$" not in words, words
        chosen: list[str | None] = []
        guard.dismiss = chosen.append  # type: ignore[method-assign]
        guard.query_one("#keep", Button).press()
        await pilot.pause()
        assert chosen == ["keep"]  # quit: nothing is left to keep
