"""Cancel during a running script, in the sandbox: how soon is the delete issued, and the exit?

    .venv/bin/python benchmarks/cancel_sandbox.py [--runs 3] [--signal INT]

Runs `tpuwizard launch --sandbox --json --script long.py` (a script that prints a line a second
for ten minutes), sends the signal when the script's second line arrives, and timestamps what
follows: signal -> delete issued (teardown_started), -> verified gone, -> process exit.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LONG = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"


def one_cancel(sig: signal.Signals) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        script = Path(home) / "long.py"
        script.write_text(LONG)
        env = dict(
            os.environ, TPUWIZARD_HOME=home, TPUWIZARD_SANDBOX_DELAY="0", NO_GCE_CHECK="true"
        )
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "tpuwizard", "launch", "--sandbox", "--json"),
                *("--accelerator", "v5litepod-1", "--zone", "us-central1-a"),
                *("--script", str(script), "--run-dir", str(Path(home) / "runs")),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        sent = 0.0
        marks: dict[str, float] = {}
        for line in proc.stdout:
            event = json.loads(line)
            if not sent and event["event"] == "script_line" and "tick 1" in event["text"]:
                sent = time.perf_counter()
                proc.send_signal(sig)
            elif sent:
                marks.setdefault(event["event"], time.perf_counter() - sent)
        proc.wait()
        marks["exit"] = time.perf_counter() - sent
        return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--signal", default="INT", help="INT, TERM or HUP")
    args = parser.parse_args()
    sig = signal.Signals[f"SIG{args.signal.upper()}"]
    runs = [one_cancel(sig) for _ in range(args.runs)]
    for key, label in (
        ("teardown_started", "signal -> delete issued"),
        ("teardown_verified", "signal -> verified gone"),
        ("exit", "signal -> exit"),
    ):
        values = [r[key] for r in runs if key in r]
        print(f"{label:26} median {statistics.median(values):5.2f} s   ({len(values)} runs)")


if __name__ == "__main__":
    main()
