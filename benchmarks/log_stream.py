"""100,000 verifier lines streamed into the Verify screen while keys are pressed.

    .venv/bin/python benchmarks/log_stream.py [--lines 100000]

Reports lines per second through VerifyScreen.show (the path launch events take) and the
slowest key press answered meanwhile (F1 opens help, Esc closes it).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from textual.app import App
from textual.events import Key

from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.records.billing_state import BillingState
from tpuwizard.tui.app import WizardApp
from tpuwizard.tui.screens.run import LOG_LINES, VerifyScreen
from tpuwizard.tui.state import WizardState


class Bench(App[None]):
    CSS_PATH = WizardApp.CSS_PATH

    def __init__(self) -> None:
        super().__init__()
        self.state = WizardState()
        self.billing = BillingState()  # what the status bar reads


async def run(total: int) -> None:
    app = Bench()
    async with app.run_test(size=(100, 32)):
        screen = VerifyScreen()
        await app.push_screen(screen)
        done = asyncio.Event()

        async def stream() -> None:
            for start in range(0, total, 500):
                for i in range(start, min(start + 500, total)):
                    screen.show(ev.VerifierLine(0, f"line {i}: loss 0.{i % 997:03d}"))
                await asyncio.sleep(0.005)  # a steady stream, as from a busy worker
            done.set()

        began = time.perf_counter()
        task = asyncio.create_task(stream())
        latencies = []
        while not done.is_set():
            for key, shows in (("f1", "HelpScreen"), ("escape", "VerifyScreen")):
                # Latency: from the key press to the screen it opens (or closes) being current.
                t = time.perf_counter()
                app.post_message(Key(key, None))
                while type(app.screen).__name__ != shows:
                    await asyncio.sleep(0.001)
                latencies.append(time.perf_counter() - t)
            await asyncio.sleep(0.02)
        await task
        elapsed = time.perf_counter() - began
        kept = screen.query_one("#log").line_count
    print(
        f"{total} lines in {elapsed:.2f} s: {total / elapsed:,.0f} lines/s "
        f"(the log keeps the last {kept:,}; bounded at {LOG_LINES:,})"
    )
    print(
        f"{len(latencies)} key presses meanwhile: slowest {max(latencies) * 1000:.0f} ms, "
        f"median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    asyncio.run(run(parser.parse_args().lines))


if __name__ == "__main__":
    main()
