"""Time to the wizard's first screen, against a bare Textual app started the same way.

    .venv/bin/python benchmarks/tui_startup.py [--runs 15] [--size 80x24]

Two measures, each run a fresh interpreter, the programs interleaved run by run so that a busy
moment of this shared machine falls on both; each figure is a median, and the ratio is the
median of the run-by-run ratios:

* **On a terminal** (the goal's measure): the program runs on a pseudo-terminal of ``--size`` with
  Textual's real driver, and the figure is the time from starting the interpreter to the first
  screen's frame arriving on the terminal: the bare app's "hello", the wizard's Route step with
  its advice line and key bar, the last of what that step draws. This is when a user sees it.
  The wizard runs twice: started like the bare app (``WizardApp().run()``), and as a user starts
  it, through the ``tpuwizard`` command (the console script's entry, tpuwizard/start.py).
* **Headless, settled**: the measure earlier sessions used. Headless, so nothing is drawn to a
  terminal, and counted up to the moment the app has nothing left to do after showing the screen
  (``call_after_refresh``), which includes redrawing what the first frame already showed.

Both start as a user's would: through the wizard's own walk to its first step, with the check
for leftovers of earlier runs (of an empty ledger here) that follows once the first step is
drawn. Bytecode is compiled first, as a pip install leaves it (this project's machines set
PYTHONDONTWRITEBYTECODE, which would otherwise charge tpuwizard's modules a compile on every
start that Textual's, compiled at install, do not pay).
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import os
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import tomllib
from pathlib import Path

BARE = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("hello")
Bare().run(**RUN)
"""

WIZARD = """
from tpuwizard.tui.app import WizardApp
WizardApp().run(**RUN)
"""

# As the console script starts it: the entry pyproject.toml declares for `tpuwizard`.
ENTRY = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())[
    "project"
]["scripts"]["tpuwizard"]
COMMAND = f"""
import sys
sys.argv = ["tpuwizard"]
from {ENTRY.split(":")[0]} import {ENTRY.split(":")[1]} as entry
entry()
"""

# Headless: say when the first screen has been shown and the app has settled, then leave.
SETTLED = """
import time
from textual.app import App
from textual.screen import Screen
def settled(app):
    print("shown", time.time(), flush=True)
    app.exit()
def push_screen(self, screen, *args, **kwargs):
    pushed = PUSH(self, screen, *args, **kwargs)
    if type(screen).__name__ == "RouteScreen":
        self.call_after_refresh(settled, self)
    return pushed
PUSH, App.push_screen = App.push_screen, push_screen
def on_mount(self):
    if type(self).__name__ == "Bare":
        self.call_after_refresh(settled, self)
App.on_mount = on_mount
RUN = {"headless": True}
"""

ON_TERMINAL = "RUN = {}\n"
SHOWN = {"bare": [b"hello"], "wizard": [b"Recommended", b"Quit"]}


def on_terminal(
    code: str, env: dict[str, str], markers: list[bytes], size: tuple[int, int]
) -> float:
    """Seconds from start to the markers arriving on a pseudo-terminal of ``size``."""
    parent, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    start = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        start_new_session=True,
    )
    os.close(child)
    seen, shown = b"", None
    try:
        while shown is None and time.time() < start + 30:
            if select.select([parent], [], [], 0.2)[0]:
                seen += os.read(parent, 1 << 16)
                if all(marker in seen for marker in markers):
                    shown = time.time()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the measure is taken: no need to quit politely
        proc.wait()
        os.close(parent)
    if shown is None:
        raise SystemExit(f"the first screen never arrived; the terminal got: {seen[-500:]!r}")
    return shown - start


def settled(code: str, env: dict[str, str]) -> float:
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, timeout=60, capture_output=True
    )
    line = next(x for x in done.stdout.decode().splitlines() if x.startswith("shown "))
    return float(line.split()[1]) - start


def report(title: str, samples: dict[str, list[float]]) -> None:
    print(title)
    bare = samples["bare Textual app"]
    for label, times in samples.items():
        ratio = statistics.median(t / b for t, b in zip(times, bare, strict=True))
        print(
            f"  {label:28s} median {statistics.median(times) * 1000:5.0f} ms   "
            f"best {min(times) * 1000:5.0f} ms   ratio {ratio:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--size", default="80x24", help="the terminal, COLUMNSxROWS")
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.split("x"))
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ,
            TPUWIZARD_HOME=home,
            CLOUDSDK_CONFIG=home,
            NO_GCE_CHECK="true",
            TERM="xterm-256color",
            COLORTERM="truecolor",
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        compileall.compile_dir(Path(__file__).resolve().parents[1] / "tpuwizard", quiet=1)
        terminal = {
            "bare Textual app": (ON_TERMINAL + BARE, SHOWN["bare"]),
            "wizard, WizardApp().run()": (ON_TERMINAL + WIZARD, SHOWN["wizard"]),
            "wizard, tpuwizard command": (COMMAND, SHOWN["wizard"]),
        }
        headless = {
            "bare Textual app": SETTLED + BARE,
            "wizard, WizardApp().run()": SETTLED + WIZARD,
        }
        for code, markers in terminal.values():  # warm the file cache
            on_terminal(code, env, markers, (columns, rows))
        on_term: dict[str, list[float]] = {label: [] for label in terminal}
        quiet: dict[str, list[float]] = {label: [] for label in headless}
        for _ in range(args.runs):
            for label, (code, markers) in terminal.items():
                on_term[label].append(on_terminal(code, env, markers, (columns, rows)))
            for label, code in headless.items():
                quiet[label].append(settled(code, env))
        report(f"First screen on a {args.size} terminal ({args.runs} runs):", on_term)
        report(f"Headless, settled ({args.runs} runs):", quiet)


if __name__ == "__main__":
    main()
