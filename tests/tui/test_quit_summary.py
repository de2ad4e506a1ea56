"""A normal Quit after a launch (nothing left billing) leaves the run's summary in the terminal,
as Delete now and Keep do (issue 27, item 14)."""

from __future__ import annotations

from tests.tui.pilot_helpers import on_screen, until
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.tui.app import WizardApp


def ended_launch() -> RunSummary:
    summary = RunSummary()
    for event in (
        ev.TeardownVerified("tpuwizard-demo", "node", 60.0, 0.08, "us-central1-a"),
        ev.Finished(True, 0, "runs/demo", 0.08),
    ):
        summary.apply(event)
    return summary


def finish_messages(app: WizardApp, monkeypatch) -> list[str | None]:
    """What the app is given to print on its way out, each time it finishes."""
    said: list[str | None] = []
    finish = app.finish
    monkeypatch.setattr(
        app, "finish", lambda code, message=None: (said.append(message), finish(code, message))
    )
    return said


async def test_quit_from_the_summary_prints_the_summary(tmp_path, monkeypatch):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    said = finish_messages(app, monkeypatch)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.last_summary = ended_launch()  # what the Summary step showed, the launch over
        app.action_quit()  # the Summary's Quit, with nothing billing: no guard to ask
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert app.return_code == 0
    (message,) = said
    assert message is not None
    assert "Exit code 0. Run folder: runs/demo" in message
    assert "Nothing is billing. tpuwizard-demo in us-central1-a verified gone." in message


async def test_quit_without_a_launch_prints_nothing(tmp_path, monkeypatch):
    app = WizardApp(run_dir=tmp_path / "runs", check_leftovers=False)
    said = finish_messages(app, monkeypatch)
    async with app.run_test(size=(100, 32)) as pilot:
        await on_screen(pilot, "RouteScreen")
        app.action_quit()
        await until(pilot, lambda: not app.is_running, 30, "the exit")
    assert said == [None]
