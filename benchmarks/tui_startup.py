"""Time to the wizard's first screen, against a bare Textual app started the same way.

    .venv/bin/python benchmarks/tui_startup.py [--runs 5]

Each run is a fresh interpreter that starts the app headless and exits as soon as the first
screen is on display; the figure is the whole process's wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

BARE = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("hello")
    def on_mount(self):
        self.call_after_refresh(self.exit)
Bare().run(headless=True)
"""

WIZARD = """
import asyncio
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.route import RouteScreen
class FirstScreen(WizardApp):
    async def step_route(self):
        await self.push_screen(RouteScreen(self.state.route))
        self.call_after_refresh(self.exit)
        await asyncio.Event().wait()
FirstScreen(check_leftovers=False).run(headless=True)
"""


def timed(code: str, env: dict[str, str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, timeout=60, stdout=subprocess.DEVNULL
        )
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TPUWIZARD_HOME=home, CLOUDSDK_CONFIG=home, NO_GCE_CHECK="true")
        for label, code in (("bare Textual app", BARE), ("tpuwizard first screen", WIZARD)):
            timed(code, env, 1)  # warm the file cache
            samples = timed(code, env, args.runs)
            print(
                f"{label:24s} median {statistics.median(samples) * 1000:6.0f} ms   "
                f"best {min(samples) * 1000:6.0f} ms   ({args.runs} runs)"
            )


if __name__ == "__main__":
    main()
