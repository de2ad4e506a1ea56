"""The Account step shows the project's preflight, made off the UI thread: a count line and each
FAIL with its fix; Next is never held by it."""

import threading

from textual.app import App
from textual.widgets import Static

from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.preflight.model import Check, Verdict
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.account import AccountScreen
from tpuwizard.tui.state import WizardState

CHECKS = [
    Check("Credentials", Verdict.PASS, "practice"),
    Check("Billing", Verdict.FAIL, "no billing account", "gcloud billing projects link p"),
    Check("OS Login", Verdict.UNKNOWN, "could not tell"),
]


class One(App[None]):
    CSS_PATH = WizardApp.CSS_PATH

    def __init__(self, screen: AccountScreen) -> None:
        super().__init__()
        self.account, self.answer = screen, None
        self.billing, self.state = BillingState(), WizardState(practice=True, project="my-project")

    async def on_mount(self) -> None:
        self.push_screen(self.account, callback=lambda answer: setattr(self, "answer", answer))


async def test_the_lines_arrive_and_next_still_goes_on():
    threads = []

    def preflight() -> list[Check]:
        threads.append(threading.current_thread())
        return CHECKS

    app = One(AccountScreen(gcloud_config.GcloudContext(), True, "my-project", preflight=preflight))
    async with app.run_test(size=(100, 32)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = str(app.screen.query_one("#preflight", Static).render())
        shown = " ".join(shown.split())
        # Issue 55.7: the count says why `preflight` counts more (5 PASS here, 7 there).
        assert (
            "Project preflight of my-project: 1 PASS, 1 UNKNOWN, 1 FAIL (quota, zone: at Create)"
        ) in shown
        assert "gcloud billing projects link p" in shown and "could not tell" not in shown
        assert threads and threads[0] is not threading.main_thread()
        await pilot.click("#next")
        await pilot.pause()
    assert app.answer is not None and app.answer.project == "my-project"
