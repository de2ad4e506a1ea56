"""The wizard driven by Pilot through real sandbox launches."""

import json
import signal
from pathlib import Path

import pytest
from textual.widgets import Switch

from tests.tui.pilot_helpers import (
    buttons,
    next_step,
    on_screen,
    press,
    record_screens,
    sandbox_nodes,
    until,
    walk_to_review,
)
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.widgets.route_cards import RouteCards

SIZE = (100, 32)


def open_ledger(home):
    return Ledger(home / "sandbox" / "ledger.jsonl").open_entries()


async def test_whole_walk_from_route_to_verified_teardown(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        assert app.state.practice  # no credentials: practice mode by itself
        assert "PRACTICE" in str(app.screen.query_one("#status-bar").render())
        await walk_to_review(pilot)
        shown = record_screens(app)
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 120, "the end")
        await on_screen(pilot, "SummaryScreen")
        phases = [name for name in shown if name.endswith("Screen")]
        assert phases[:1] == ["ProvisionScreen"] and "VerifyScreen" in phases, phases
        assert phases.index("VerifyScreen") < phases.index("SummaryScreen"), phases
        assert app.state.finished_code == 0 and app.state.receipt_ok, app.state.last_failure
        assert Path(app.state.receipt_path).is_file()
        assert not app.billing.may_bill()
        verdict = str(app.screen.query_one("#verdict").render())
        assert "Nothing is billing" in verdict
        # The results stay on screen: every check, the receipt's hash and path, the cost.
        summary = app.screen.query_one("#summary").plain
        receipt = json.loads(Path(app.state.receipt_path).read_text())
        assert "Checks: " in summary and "FAIL" not in summary
        assert "PASS contract" in summary
        assert receipt["receipt_sha256"] in summary and app.state.receipt_path in summary
        # Practice: nothing billed, and what Google would have charged.
        assert "Cost: nothing billed (practice); on Google about $" in summary
        assert "verified gone" in summary
        # The course's last step, the empty list, on the Teardown step and the Summary.
        empty = "The TPU list of us-central1-a now: empty. No TPU, yours or anyone's, is there."
        assert empty in " ".join(summary.split())
        [teardown] = [s for s in shown.objects if type(s).__name__ == "TeardownScreen"]
        assert empty in " ".join(teardown.listed)  # what its verdict showed (it is gone now)
        # Priced from the practice sandbox's Billing Catalog, and said so (issue 33).
        assert "Prices: the Cloud Billing Catalog's prices (read " in summary
        await pilot.pause(2.5)  # nothing replaces the summary by itself
        assert type(app.screen).__name__ == "SummaryScreen"
        assert sandbox_nodes(home) == {} and open_ledger(home) == []
        await pilot.press("ctrl+q")  # nothing bills: quit at once
    assert app.return_code == 0


async def test_quit_guard_names_it_refuses_a_wrong_name_and_deletes(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "30")  # stay in provisioning
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await until(pilot, lambda: app.billing.may_bill() and sandbox_nodes(home), 30, "the node")
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        text = str(app.screen.query_one("#guard-text").render())
        (node,) = app.billing.existing()
        assert node.name in text and node.zone in text
        await pilot.press("ctrl+q")  # a second quit does not stack a second guard
        await pilot.pause()  # until it has been handled
        assert sum(type(s).__name__ == "QuitGuard" for s in app.screen_stack) == 1
        app.screen.query_one("#confirm-name").value = "not-the-name"
        await press(pilot, "#keep")
        await until(
            pilot,
            lambda: "exactly" in str(app.screen.query_one("#guard-error").render()),
            30,
            "the wrong name to be refused",
        )
        assert type(app.screen).__name__ == "QuitGuard" and app.is_running
        await press(pilot, "#delete")
        await until(pilot, lambda: not app.is_running, 60, "the exit after teardown")
    assert app.return_code == 0
    assert sandbox_nodes(home) == {} and open_ledger(home) == []


async def test_leftovers_from_an_earlier_run_are_offered_first(tmp_path, home):
    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.cloud.types import NodeRequest
    from tpuwizard.core.paths import owner_label
    from tpuwizard.sandbox.server import make_server
    from tpuwizard.sandbox.serving import start_in_thread
    from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

    earlier = make_server(home / "sandbox", delay=0)
    start_in_thread(earlier)
    cloud = TpuCloud(PRACTICE_PROJECT, endpoint=earlier.endpoint)
    cloud.wait_for_node(
        "us-west1-c",
        "forgotten",
        cloud.create_node(
            NodeRequest(
                zone="us-west1-c",
                node_id="forgotten",
                slice=parse_accelerator("v5litepod-1"),
                run_id="20261128-101010-abcd",
                owner=owner_label(),  # an earlier run of this install
            )
        ),
        poll=0.05,
    )
    earlier.shutdown()
    earlier.server_close()

    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "LeftoversScreen", 30)
        assert "forgotten" in str(app.screen.query_one("#leftovers").render())
        await press(pilot, "#delete")
        await on_screen(pilot, "RouteScreen", 30)
        await until(pilot, lambda: sandbox_nodes(home) == {}, 30, "the deletion")


async def test_sigterm_during_provisioning_tears_down_and_exits_143(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_DELAY", "30")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await until(pilot, lambda: sandbox_nodes(home), 30, "the node")
        # What the loop's SIGTERM handler calls (a real signal would stop pytest itself).
        app.on_signal(signal.SIGTERM)
        await until(pilot, lambda: not app.is_running, 60, "the exit")
    assert app.return_code == 128 + signal.SIGTERM
    assert sandbox_nodes(home) == {} and open_ledger(home) == []


async def test_stockout_offers_other_zones_and_the_retry_succeeds(tmp_path, home, monkeypatch):
    # The zone Zones preselects (the cheapest confirmed one) has no capacity.
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "stockout=us-central1-a")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        assert app.state.zone == "us-central1-a"
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 60, "the stockout")
        await on_screen(pilot, "SummaryScreen")
        await until(
            pilot, lambda: any(b.startswith("Try ") for b in buttons(app)), 10, "zone buttons"
        )
        assert app.state.last_failure.kind == "stockout"
        offered = [b.removeprefix("Try ") for b in buttons(app) if b.startswith("Try ")]
        assert "us-central1-a" not in offered  # the zone that had none is not offered again
        # The next steps stay on the summary in the wizard's own words: its buttons and its
        # Route step's choices, never the CLI's --failover or --route.
        summary = app.screen.query_one("#summary").plain
        assert 'the summary\'s "Try <zone>" buttons start the same launch there' in summary
        assert '"TPU VM, spot" on the Route step' in summary
        assert "--" not in summary
        await press(pilot, f"#zone-{offered[0]}")
        await on_screen(pilot, "ReviewScreen")
        assert app.state.zone == offered[0]
        await press(pilot, "#create")
        await until(
            pilot,
            lambda: app.state.finished_code == 0 and app.state.receipt_ok,
            120,
            "the second launch",
        )
    assert sandbox_nodes(home) == {} and open_ledger(home) == []


async def test_esc_goes_back_and_help_opens(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        await next_step(pilot)
        await on_screen(pilot, "AccountScreen")
        await pilot.press("escape")
        await on_screen(pilot, "RouteScreen")
        await pilot.press("f1")
        await on_screen(pilot, "HelpScreen")
        assert "Ctrl+Q" in str(app.screen.query_one("#help-text").render())
        await pilot.press("escape")
        await on_screen(pilot, "RouteScreen")
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"


async def test_small_terminal_is_told_so(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(70, 20)) as pilot:
        await on_screen(pilot, "TooSmallScreen")
        assert "at least 80x24" in str(app.screen.query_one("#too-small").render())
        assert not app._notifications  # said once, by the screen, never again as a toast
        await pilot.resize_terminal(80, 24)
        await on_screen(pilot, "RouteScreen")


async def test_a_terminal_made_too_small_on_a_step_is_covered_until_it_grows(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=(80, 24)) as pilot:
        for step in ("RouteScreen", "AccountScreen"):
            await on_screen(pilot, step)
            await pilot.resize_terminal(79, 24)
            await on_screen(pilot, "TooSmallScreen", 30)
            await pilot.resize_terminal(80, 24)
            await on_screen(pilot, step, 30)  # the step as it was
            await next_step(pilot)


async def test_notebook_route_writes_it_and_checks_receipts(tmp_path):
    import json

    from tests.receipt_fixtures import verifier_receipt

    good, cpu = tmp_path / "good.json", tmp_path / "cpu.json"
    good.write_text(json.dumps(verifier_receipt("tpu", 1, kind="TPU v5 lite")))
    cpu.write_text(json.dumps(verifier_receipt("cpu", 1)))
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.screen.query_one(RouteCards).choose("notebook")  # the free notebook's card
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")
        await press(pilot, "#write")
        assert (tmp_path / "tpuwizard-colab.ipynb").is_file()
        result = app.screen.query_one("#result")
        field = app.screen.query_one("#receipt")
        field.value = str(cpu)
        await press(pilot, "#check")
        await until(pilot, lambda: "REJECTED" in str(result.render()), 30, "the rejection")
        field.value = str(good)
        field.focus()
        await pilot.press("enter")  # Enter in the field checks too
        await until(pilot, lambda: "PASS" in str(result.render()), 30, "the pass")


@pytest.mark.rotating("deep-checks-e2e")
async def test_the_deeper_checks_switch_brings_back_precision_and_a_trace(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        app.screen.query_one("#deep-checks", Switch).toggle()  # what a click on it does
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 120, "the end")
        assert app.state.workload.precision and app.state.finished_code == 0
        receipt = json.loads(Path(app.state.receipt_path).read_text())
        assert receipt["precision"]["bf16"]["max_rel_error"] > 0
        run = Path(app.state.receipt_path).parent
        assert all((run / "trace" / f["path"]).is_file() for f in receipt["trace"]["files"])
        await pilot.press("ctrl+q")
