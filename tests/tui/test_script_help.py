"""The Script step's F1 help says what the node does while a Shell is open as practice or real
says it (newcomer round 6, D2: "the node keeps billing" in practice)."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from tests.tui.test_snapshots import Harness, demo_billing
from tpuwizard.tui.screens.help import HelpScreen
from tpuwizard.tui.screens.run import ScriptScreen
from tpuwizard.tui.state import WizardState


@pytest.mark.parametrize(
    ("practice", "said", "unsaid"),
    [
        (True, "the node keeps running (practice: not billed) meanwhile", "billing"),
        (False, "the node keeps billing meanwhile", "practice"),
    ],
)
async def test_f1_on_the_script_step_says_billing_only_when_real(practice, said, unsaid):
    state = WizardState(practice=practice, project="p", zone="us-central1-a")
    app = Harness(ScriptScreen, state, (), demo_billing())
    async with app.run_test(size=(100, 32)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(app.screen.query_one("#help-text", Static).render()).split())
        assert text.startswith("Help: 8 Your script") and said in text, text
        assert unsaid not in text.lower(), text
