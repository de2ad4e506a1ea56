"""Render every screen of a real sandbox walk into screenshots/*.svg.

    .venv/bin/python scripts/screenshots.py

The wizard runs headless at 100x32 in practice mode, in a throw-away state folder, through a full
launch with a small script of its own; each run screen is captured just before the next replaces
it. Nothing here is drawn by hand.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "screenshots"
SIZE = (100, 32)
NAMES = {
    "RouteScreen": "01-route",
    "AccountScreen": "02-account",
    "CapacityScreen": "03-capacity",
    "ZonesScreen": "04-zones",
    "ReviewScreen": "05-review",
    "ProvisionScreen": "06-provision",
    "VerifyScreen": "07-verify",
    "ScriptScreen": "08-script",
    "TeardownScreen": "09-teardown",
    "QuitGuard": "10-quit-guard",
    "HelpScreen": "11-help",
    "NotebookScreen": "12-notebook",
    "SummaryScreen": "13-summary",
}
COMPUTE_REVIEW = "14-review-compute"  # Review of a v6e-4 with its Compute Engine switch on


async def settle(app) -> None:
    """Draw what a run screen has been told. It writes its lines in 50 ms batches, so the last
    events' lines (Teardown's "The TPU list of ZONE now", "Done") are still pending when the
    launch's stream ends and the Summary replaces the screen at once: written here, then drawn,
    before the picture is taken."""
    flush = getattr(app.screen, "flush", None)
    if flush is not None:
        flush()
        await asyncio.sleep(0.1)  # one refresh of the screen, which the picture reads


async def walk(tmp: Path) -> None:
    from tests.tui.pilot_helpers import next_step, on_screen, press, until
    from tpuwizard.tui.app import WizardApp
    from tpuwizard.tui.widgets.route_cards import RouteCards

    taken: set[str] = set()  # pictures taken at their moment, not again on the way out

    class Recording(WizardApp):
        async def switch_screen(self, screen):  # type: ignore[override]
            await settle(self)  # the run screen as last seen, before the next phase replaces it
            if NAMES.get(type(self.screen).__name__) not in taken:
                save(self)
            return await super().switch_screen(screen)

    def save(app) -> None:
        name = NAMES.get(type(app.screen).__name__)
        if name:
            app.save_screenshot(filename=f"{name}.svg", path=str(OUT))

    script = tmp / "experiment.py"
    script.write_text(
        "import jax\nfor step in range(5):\n"
        "    print(f'step {step}: {jax.device_count()} devices')\n"
    )
    app = Recording(run_dir=tmp / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        for screen in ("RouteScreen", "AccountScreen", "CapacityScreen"):
            await on_screen(pilot, screen)
            save(app)
            if screen == "RouteScreen":
                await pilot.press("f1")
                await on_screen(pilot, "HelpScreen")
                save(app)
                await pilot.press("escape")
                await on_screen(pilot, "RouteScreen")
            await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="zones")
        save(app)
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        app.screen.query_one("#script").value = str(script)
        await pilot.pause()  # Review's words follow the field (what will be copied back)
        save(app)
        await press(pilot, "#create")
        await until(pilot, lambda: app.billing.may_bill(), 30, "billing")
        await pilot.pause(1.2)
        save(app)
        await pilot.press("ctrl+q")
        await on_screen(pilot, "QuitGuard")
        save(app)
        await press(pilot, "#stay")
        # The script screen offers Run again / Edit and rerun / Tear down when the script ends.
        await until(pilot, lambda: app.screen.query("#end-runs"), 180, "the rerun choices")
        await settle(app)
        save(app)  # with its choices: pressing Tear down takes them away
        taken.add("08-script")
        await press(pilot, "#end-runs")
        await until(pilot, lambda: app.state.finished_code is not None, 180, "the end")
        await on_screen(pilot, "SummaryScreen")
        await pilot.pause(1.2)
        save(app)
        await press(pilot, "#quit")
    notebook_app = WizardApp(run_dir=tmp / "runs", check_leftovers=False)
    async with notebook_app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, "RouteScreen")
        notebook_app.screen.query_one(RouteCards).choose("notebook")
        await next_step(pilot)
        await on_screen(pilot, "NotebookScreen")
        await press(pilot, "#write")
        await pilot.pause(0.3)
        save(notebook_app)
    await compute_review(tmp)


async def compute_review(tmp: Path) -> None:
    """Review of a v6e-4 made through Compute Engine: which API, and Google's deadline."""
    from textual.widgets import DataTable, Switch

    from tests.tui.pilot_helpers import next_step, on_screen, until, walk_to_capacity
    from tpuwizard.tui.app import WizardApp

    app = WizardApp(run_dir=tmp / "runs", check_leftovers=False)
    async with app.run_test(size=SIZE) as pilot:
        await walk_to_capacity(pilot)
        fits = [f.name for f in app.screen.fits]
        app.screen.query_one(DataTable).move_cursor(row=fits.index("v6e-4"))
        await next_step(pilot)
        await on_screen(pilot, "ZonesScreen")
        await until(pilot, lambda: app.screen.zones, what="zones")
        await next_step(pilot)
        await on_screen(pilot, "ReviewScreen")
        app.screen.query_one("#compute", Switch).value = True
        words = app.screen.query_one("#deadline-words")
        await until(pilot, lambda: "Google deletes it" in str(words.render()), 10, "the words")
        app.save_screenshot(filename=f"{COMPUTE_REVIEW}.svg", path=str(OUT))


def main() -> None:
    sys.path.insert(0, str(ROOT))
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            TPUWIZARD_HOME=str(Path(tmp) / "state"),
            NO_GCE_CHECK="true",
            CLOUDSDK_CONFIG=str(Path(tmp) / "no-gcloud"),
            TPUWIZARD_SANDBOX_DELAY="2",
            TEXTUAL_ANIMATIONS="none",
        )
        os.chdir(tmp)
        asyncio.run(walk(Path(tmp)))
    for svg in sorted(OUT.glob("*.svg")):
        print(svg.relative_to(ROOT))


if __name__ == "__main__":
    main()
