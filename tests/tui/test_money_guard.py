"""The wizard's money safety, each first reproduced as a user met it (issue "One way in").

Keep keeps and exits at once; Delete now stops a running script at once; the review screen
refuses what the plan would refuse; a refused create bills nothing; leftovers are guarded.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time

import pytest
from textual.widgets import Button, Input

from tests.tui.pilot_helpers import (
    make_leftover,
    on_screen,
    press,
    sandbox_nodes,
    until,
    walk_to_review,
)
from tests.waiting import wait_until_async
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.routes import Route
from tpuwizard.tui.app import WizardApp

SIZE = (100, 32)
LONG_SCRIPT = (
    "import time\nfor i in range(300):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"
)


def ledger_ops(home) -> dict[str, str]:
    return {e.resource.name: e.op for e in Ledger(home / "sandbox" / "ledger.jsonl").entries()}


async def start_long_script(pilot, tmp_path) -> None:
    script = tmp_path / "long.py"
    script.write_text(LONG_SCRIPT)
    await walk_to_review(pilot)
    pilot.app.screen.query_one("#script", Input).value = str(script)
    await press(pilot, "#create")
    await on_screen(pilot, "ScriptScreen", 120)
    await until(pilot, lambda: "tick 1" in pilot.app.screen.log_text(), 60, "the script's output")


def status_text(app) -> str:
    return str(app.screen.query_one("#status-bar").render())


@pytest.mark.rotating("kept-node-e2e")
async def test_keep_during_a_running_script_keeps_it_and_exits_at_once(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await start_long_script(pilot, tmp_path)
        (node,) = app.billing.existing()
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        app.screen.query_one("#confirm-name", Input).value = node.name
        asked = time.monotonic()
        await press(pilot, "#keep")
        await until(pilot, lambda: not app.is_running, 30, "the exit")
        took = time.monotonic() - asked
    assert took < 10, f"keeping took {took:.1f} s: the launch did not detach"
    assert app.return_code == 0
    # Nothing deleted it: the node is still there, and the ledger says kept, not gone.
    assert node.name in {n.rsplit("/", 1)[-1] for n in sandbox_nodes(home)}
    assert ledger_ops(home)[node.name] == "kept"


async def test_delete_now_stops_the_script_and_deletes_without_waiting_for_it(tmp_path, home):
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await start_long_script(pilot, tmp_path)
        (node,) = app.billing.existing()
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        said: list[str] = []
        goodbye = app.goodbye
        app.goodbye = lambda summary=None: said.append(goodbye(summary) or "") or said[-1]
        await press(pilot, "#delete")
        await until(pilot, lambda: not app.is_running, 30, "the exit after teardown")
    assert sandbox_nodes(home) == {}
    assert ledger_ops(home)[node.name] == "gone"
    # The summary printed on the way out says the code the wizard exits with.
    assert app.return_code == 0 and "Exit code 0." in said[-1]


async def test_review_disables_create_with_the_reason_for_what_the_plan_refuses(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        create = app.screen.query_one("#create", Button)
        assert not create.disabled
        for field, value in [
            ("#fetch", "../secrets/*"),
            ("#fetch", "/etc/passwd"),
            ("#max-run", "soon"),
            ("#script", str(tmp_path / "missing.py")),
        ]:
            app.screen.query_one(field, Input).value = value
            await until(pilot, lambda: create.disabled, 30, f"{field}={value!r} refused")
            assert str(app.screen.query_one("#error").render()).strip()
            app.screen.query_one(field, Input).value = ""
            if field == "#max-run":
                app.screen.query_one(field, Input).value = "120"
            await until(pilot, lambda: not create.disabled, 30, f"{field} cleared accepted")
        await press(pilot, "#create")  # disabled buttons do nothing; an enabled one creates
        await on_screen(pilot, "ProvisionScreen", 30)


async def test_review_refuses_a_long_name_on_spot(tmp_path):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        app.state.route = Route.SPOT
        app.screen.query_one("#name", Input).value = "a" + "b" * 61  # 62 characters
        create = app.screen.query_one("#create", Button)
        await until(pilot, lambda: create.disabled, 30, "the long name refused")
        assert "60 characters" in str(app.screen.query_one("#error").render())


async def test_a_refused_create_bills_nothing_and_quits_at_once(tmp_path, home, monkeypatch):
    monkeypatch.setenv("TPUWIZARD_SANDBOX_FAULTS", "quota=5")
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_review(pilot)
        await press(pilot, "#create")
        await until(pilot, lambda: app.state.finished_code is not None, 60, "the refusal")
        await on_screen(pilot, "SummaryScreen")
        assert app.state.last_failure.kind == "quota"
        assert not app.billing.may_bill()
        assert "Nothing is billing" in status_text(app)
        await pilot.press("ctrl+q")  # nothing exists: no guard, no question
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert app.return_code == 0


def drawn_meter_seconds(app) -> str:
    """The seconds the meter shows as drawn on the terminal (not as the bar would render now)."""
    svg = app.export_screenshot().replace("&#160;", " ")
    drawn = " ".join(re.findall(r">([^<>]*)</text>", svg))
    found = re.search(r"RUNNING forgotten (\d+)s", drawn)  # practice: running, not billed
    return found.group(1) if found else ""


async def test_leftovers_dialog_goes_through_the_quit_guard(tmp_path, home):
    make_leftover(home)
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "LeftoversScreen", 30)
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        assert "forgotten" in str(app.screen.query_one("#guard-text").render())
        await press(pilot, "#stay")
        await on_screen(pilot, "LeftoversScreen")
        await pilot.press("escape")
        await on_screen(pilot, "QuitGuard")
        # Two dialogs over the step: the meter under them keeps running (Textual redraws a bar
        # two screens down only when asked; a frozen one would say the leftover stopped costing).
        await until(pilot, lambda: drawn_meter_seconds(app) != "", 30, "the meter")
        first = drawn_meter_seconds(app)
        await until(pilot, lambda: drawn_meter_seconds(app) not in ("", first), 30, "a new second")
        await press(pilot, "#stay")
        await on_screen(pilot, "LeftoversScreen")
        assert app.is_running


async def test_leftovers_left_running_still_show_as_billing(tmp_path, home):
    make_leftover(home)
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "LeftoversScreen", 30)
        await press(pilot, "#leave")
        await on_screen(pilot, "RouteScreen", 30)
        await until(pilot, lambda: "RUNNING forgotten" in status_text(app), 30, "the meter")
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")  # it still bills: quitting says so
        assert "they keep running (practice: not billed)" in str(
            app.screen.query_one("#guard-text").render()
        )
        await press(pilot, "#keep")  # already left on purpose: no name to type
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert "forgotten" in {n.rsplit("/", 1)[-1] for n in sandbox_nodes(home)}


async def test_first_step_shows_while_leftovers_are_looked_for_and_the_dialog_follows(
    tmp_path, home, monkeypatch
):
    # The check opens the cloud, which can take seconds: the first step must not wait for it,
    # and until it answers the meter must not claim that nothing bills.
    make_leftover(home)
    from tpuwizard.session.session import Session

    release = threading.Event()
    find = Session.find_leftovers

    def slow_find(self, *args, **kwargs):
        assert release.wait(30)
        return find(self, *args, **kwargs)

    monkeypatch.setattr(Session, "find_leftovers", slow_find)
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen", 30)
        assert "Looking for leftovers" in status_text(app)
        assert "Nothing is billing" not in status_text(app)
        release.set()
        await on_screen(pilot, "LeftoversScreen", 30)
        await press(pilot, "#leave")
        await on_screen(pilot, "RouteScreen", 30)  # the step the user was on, as it was
        await until(pilot, lambda: "RUNNING forgotten" in status_text(app), 30, "the meter")


@pytest.mark.rotating("kept-node-e2e")
async def test_a_node_kept_in_practice_outlives_the_wizard_and_its_watchdog_still_deletes_it(
    tmp_path, home
):
    # The watchdog on the node calls the practice cloud at its deadline. The wizard's own
    # sandbox ends with the wizard, so keeping must hand the cloud to a lasting one at the same
    # address, or "deleted at HH:MM even if this laptop sleeps" would be a false promise.
    from tests.integration.iterate_helpers import stop_lasting_sandbox, watchdog_story
    from tpuwizard.core.cloud.endpoint import ENDPOINT_ENV

    script = tmp_path / "long.py"
    script.write_text(LONG_SCRIPT)
    app = WizardApp(run_dir=tmp_path / "runs")
    try:
        async with app.run_test(size=SIZE) as pilot:
            await walk_to_review(pilot)
            app.screen.query_one("#script", Input).value = str(script)
            # The deadline: 60 s, so a loaded machine still reaches the script before it.
            app.screen.query_one("#max-run", Input).value = "1"
            assert app.screen.query_one("#watchdog").value  # armed by default in practice
            await press(pilot, "#create")
            await on_screen(pilot, "ScriptScreen", 120)
            await until(pilot, lambda: "tick 1" in app.screen.log_text(), 60, "the script")
            (node,) = app.billing.existing()
            await pilot.press("ctrl+q")
            await on_screen(pilot, "QuitGuard")
            app.screen.query_one("#confirm-name", Input).value = node.name
            await press(pilot, "#keep")
            await until(pilot, lambda: not app.is_running, 30, "the exit")
        lasting = json.loads((home / "sandbox" / "server.json").read_text())
        assert lasting["endpoint"] == os.environ[ENDPOINT_ENV]  # where the watchdog calls
        assert node.name in {n.rsplit("/", 1)[-1] for n in sandbox_nodes(home)}
        try:
            await wait_until_async(lambda: sandbox_nodes(home) == {}, 120, "the watchdog's delete")
        except AssertionError as err:  # which it was: refused, never armed, killed, late
            raise AssertionError(f"{err}\n{watchdog_story(home)}") from None
    finally:
        stop_lasting_sandbox(home)


async def test_a_leftover_record_in_a_zone_that_refuses_is_said_and_the_rest_still_offered(
    tmp_path, home
):
    # Issue 22, item 3: before, one such record made the whole check fail ("Could not check
    # for leftovers") and the leftover in a good zone was never offered.
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.core.paths import owner_label
    from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

    make_leftover(home)
    lost = Resource(
        "node",
        PRACTICE_PROJECT,
        "europe-west1-b",
        "lost",
        "v5litepod-1",
        "run-2",
        owner=owner_label(),
    )
    Ledger(home / "sandbox" / "ledger.jsonl").record("created", lost)
    app = WizardApp(run_dir=tmp_path / "runs")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "LeftoversScreen", 30)
        said = " ".join(str(n.message) for n in app._notifications)
        assert "Could not check lost in europe-west1-b" in said
        assert "Could not check for leftovers" not in said
        await press(pilot, "#leave")
        await on_screen(pilot, "RouteScreen", 30)
