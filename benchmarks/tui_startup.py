"""Time to the wizard's first screen, against a bare Textual app started the same way.

    .venv/bin/python benchmarks/tui_startup.py [--runs 5]

Each run is a fresh interpreter that starts the app headless; the figure is the wall time from
starting the interpreter to the first screen on display (the app then exits; its exit, which
for the wizard waits for the leftover check's thread, is not counted). The wizard starts as a user's
does, through its own walk to the first step; the leftover check that follows the first step
(of an empty ledger here) is not counted: it starts once that step is drawn.

Both programs run with their bytecode compiled, as a pip install leaves them: in an editable
install under PYTHONDONTWRITEBYTECODE (set on this project's machines) tpuwizard's modules would
be compiled from source on every start while Textual's were compiled at install, which charged
the wizard some 30 ms that no user pays.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHOWN = """
import time
def shown(app):
    print("shown", time.time(), flush=True)
    app.exit()
"""

BARE = (
    SHOWN
    + """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("hello")
    def on_mount(self):
        self.call_after_refresh(shown, self)
Bare().run(headless=True)
"""
)

WIZARD = (
    SHOWN
    + """
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.route import RouteScreen
class FirstScreen(WizardApp):
    def push_screen(self, screen, *args, **kwargs):
        pushed = super().push_screen(screen, *args, **kwargs)
        if isinstance(screen, RouteScreen):
            self.call_after_refresh(shown, self)
        return pushed
FirstScreen().run(headless=True)
"""
)

def timed(code: str, env: dict[str, str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.time()
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, check=True, timeout=60, capture_output=True
        )
        line = next(x for x in done.stdout.decode().splitlines() if x.startswith("shown "))
        samples.append(float(line.split()[1]) - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TPUWIZARD_HOME=home, CLOUDSDK_CONFIG=home, NO_GCE_CHECK="true")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        package = Path(__file__).resolve().parents[1] / "tpuwizard"
        compileall.compile_dir(package, quiet=1)
        for label, code in (("bare Textual app", BARE), ("tpuwizard first screen", WIZARD)):
            timed(code, env, 1)  # warm the file cache
            samples = timed(code, env, args.runs)
            print(
                f"{label:24s} median {statistics.median(samples) * 1000:6.0f} ms   "
                f"best {min(samples) * 1000:6.0f} ms   ({args.runs} runs)"
            )


if __name__ == "__main__":
    main()
