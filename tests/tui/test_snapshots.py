"""Every screen rendered at 100x32 and at the stated minimum, 80x24, from fixed state and fixed
events, compared with its SVG.

Update after an intended change with: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App

from tests.lifecycle_events import planned
from tpuwizard.core.cloud import gcloud_config
from tpuwizard.core.cloud.zones import documented
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.core.plan import catalog
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.state import WizardState

NOW = 1_800_000_000.0  # a fixed clock: ages and costs do not move between runs


@pytest.fixture(params=[(100, 32), (80, 24)], ids=["100x32", "80x24"])
def size(request):
    return request.param


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch):
    import time

    monkeypatch.setattr(time, "time", lambda: NOW)
    monkeypatch.setenv("TZ", "UTC")  # the deadline is shown as a local HH:MM
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


class Harness(App[None]):
    """One wizard screen on its own, with the wizard's styles and a fixed state."""

    CSS_PATH = WizardApp.CSS_PATH

    def __init__(
        self, make_screen, state: WizardState | None = None, feed=(), billing=None
    ) -> None:
        super().__init__()
        self.billing = billing or BillingState()
        self.state = state or WizardState(
            practice=True, project="tpuwizard-practice", zone="us-central1-a"
        )
        self.make_screen, self.feed = make_screen, feed

    async def on_mount(self) -> None:
        screen = self.make_screen()
        await self.push_screen(screen)
        for event in self.feed:
            screen.show(event)


def billing_state() -> WizardState:
    return WizardState(practice=True, project="tpuwizard-practice", zone="us-central1-a")


def demo_billing() -> BillingState:
    billing = BillingState()
    billing.apply(
        ev.ResourceExists("tpuwizard-demo", "node", "us-central1-a", "v5litepod-4", "vm", "r")
    )
    billing.apply(ev.BillingStarted("tpuwizard-demo", NOW - 95, 4.8))
    return billing


def test_route(snap_compare, size):
    from tpuwizard.tui.screens.route import RouteScreen

    assert snap_compare(Harness(lambda: RouteScreen("vm")), terminal_size=size)


def test_account_without_credentials(snap_compare, size):
    from tpuwizard.tui.screens.account import AccountScreen

    ctx = gcloud_config.GcloudContext(
        problems=[
            ("No Application Default Credentials", "gcloud auth application-default login"),
            ("No project is set", "gcloud config set project PROJECT_ID"),
        ]
    )
    assert snap_compare(Harness(lambda: AccountScreen(ctx, True)), terminal_size=size)


def test_capacity(snap_compare, size):
    from tpuwizard.tui.screens.capacity import CapacityScreen

    assert snap_compare(Harness(lambda: CapacityScreen(48, "v5litepod-4")), terminal_size=size)


def test_zones(snap_compare, size):
    from tpuwizard.session.decision import ZoneAnswer
    from tpuwizard.tui.screens.zones import ZonesScreen

    answer = ZoneAnswer(documented(), practice=False)
    app = Harness(
        lambda: ZonesScreen(
            catalog.parse_accelerator("v5litepod-4"), "us-central1-a", lambda: answer
        )
    )
    assert snap_compare(app, terminal_size=size, run_before=_settle)


def test_review(snap_compare, size):
    from tpuwizard.core.cloud.iam import WatchdogCheck
    from tpuwizard.core.launch.plan.parts import Deadline
    from tpuwizard.tui.screens.review import ReviewScreen

    state = WizardState(
        practice=True,
        project="tpuwizard-practice",
        zone="us-central1-a",
        name="jax-course-tpu-01",
        accelerator="v5litepod-4",
        # As the wizard leaves it after the check before create said yes: armed by default.
        deadline=Deadline(watchdog=True),
        watchdog_check=WatchdogCheck(True, "it has roles/editor", "1-compute@x.example"),
    )
    assert snap_compare(Harness(lambda: ReviewScreen(state), state), terminal_size=size)


def test_provision(snap_compare, size):
    from tpuwizard.tui.screens.run import ProvisionScreen

    feed = [ev.Provisioning("CREATING", 0.0, 0.0), ev.Provisioning("READY", 41.0, 0.0547)]
    assert snap_compare(
        Harness(ProvisionScreen, billing_state(), feed, demo_billing()), terminal_size=size
    )


def test_verify_with_a_failed_boundary(snap_compare, size):
    from tpuwizard.tui.screens.run import VerifyScreen

    feed = [
        ev.SshReady(1),
        ev.Versions(
            0, {"jax": "0.10.2", "jaxlib": "0.10.2", "libtpu": "0.0.30", "python": "3.10.12"}
        ),
        ev.VerifierLine(0, "tpu_verify: expecting platform 'tpu' on t1v-n-1 (Python 3.10)"),
        ev.Check(0, "import", True, "jax 0.10.2", "import"),
        ev.Check(0, "backend", False, "JAX has no 'tpu' backend here", "backend"),
        ev.ReceiptSaved("runs/demo/receipt.json", False, "0123456789abcdef"),
    ]
    assert snap_compare(
        Harness(VerifyScreen, billing_state(), feed, demo_billing()), terminal_size=size
    )


def test_script(snap_compare, size):
    from tpuwizard.tui.screens.run import ScriptScreen

    feed: list[ev.Event] = [ev.ScriptLine(0, f"step {i}: loss {1 / (i + 1):.3f}") for i in range(5)]
    feed.append(ev.FileFetched("runs/demo/files/reports/result.txt"))
    assert snap_compare(
        Harness(ScriptScreen, billing_state(), feed, demo_billing()), terminal_size=size
    )


def test_teardown_verified(snap_compare, size):
    from tpuwizard.tui.screens.run import TeardownScreen

    feed = [
        ev.TeardownStarted("tpuwizard-demo", "node"),
        ev.TeardownVerified("tpuwizard-demo", "node", 312.0, 0.416),
        ev.Finished(True, 0, "runs/demo", 0.416),
    ]
    assert snap_compare(Harness(TeardownScreen, None, feed), terminal_size=size)


def test_summary(snap_compare, size):
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.tui.screens.summary import SummaryScreen

    summary = RunSummary()
    for event in [
        planned("demo"),
        ev.Check(0, "import", True, "jax 0.10.2, jaxlib 0.10.2", "import"),
        ev.Check(0, "backend", True, "cpu, 4 devices", "backend"),
        ev.Check(0, "contract", True, "pmap sum of squares 10416.0", "contract"),
        ev.ReceiptSaved("runs/demo/receipt.json", True, "a9b1672804f8c62d"),
        *[ev.ScriptLine(0, f"step {i}: loss {1 / (i + 1):.3f}") for i in range(5)],
        ev.ScriptFinished(0),
        ev.FileFetched("runs/demo/files/reports/result.txt"),
        ev.TeardownVerified("tpuwizard-demo", "node", 312.0, 0.416),
        ev.Finished(True, 0, "runs/demo", 0.416),
    ]:
        summary.apply(event)

    async def offer(pilot) -> None:
        pilot.app.screen.offer([])
        await pilot.pause(0.2)

    app = Harness(lambda: SummaryScreen(summary))
    assert snap_compare(app, terminal_size=size, run_before=offer)


def test_quit_guard(snap_compare, size):
    from tpuwizard.tui.screens.quit_guard import QuitGuard

    billing = demo_billing()
    guard = Harness(
        lambda: QuitGuard(billing.existing(), billing.undecided()), billing_state(), (), billing
    )
    assert snap_compare(guard, terminal_size=size)


def test_help(snap_compare, size):
    from tpuwizard.tui.screens.help import HelpScreen
    from tpuwizard.tui.screens.route import RouteScreen

    assert snap_compare(
        Harness(lambda: HelpScreen(RouteScreen.STEP, RouteScreen.HELP, RouteScreen.CAN_GO_BACK)),
        terminal_size=size,
    )


def test_notebook(snap_compare, size):
    from tpuwizard.tui.screens.notebook import NotebookScreen

    assert snap_compare(Harness(lambda: NotebookScreen(Path("."))), terminal_size=size)


def test_leftovers(snap_compare, size):
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.tui.screens.leftovers import LeftoversScreen

    found = [
        Billable(
            Resource("node", "p", "us-west1-c", "forgotten", "v5litepod-1", "r"),
            "READY",
            7200.0,
            2.4,
            "ledger+labels",
        )
    ]
    assert snap_compare(Harness(lambda: LeftoversScreen(found)), terminal_size=size)


async def _settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.wait_for_scheduled_animations()  # and the screen is idle: nothing left to draw
