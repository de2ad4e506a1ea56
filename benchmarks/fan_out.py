"""Capacity in three zones, two of them stocked out: fan-out against serial failover, time to
READY, against one zone that has capacity (goal: fan-out within 1.2x of the one good zone).

    .venv/bin/python benchmarks/fan_out.py [--runs 3] [--delay 2.0]

Each run is a `tpuwizard launch --sandbox --json` in its own state folder, the sandbox's
provisioning taking ``--delay`` seconds (a stockout is known when its create operation ends,
as at Google): timed from the `planned` event to `ready`, then stopped with SIGTERM, which
deletes and verifies everything (checked: the sandbox is empty at the end). The three cases
are interleaved, so machine load falls on each alike.
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

ZONES = "us-central1-a,us-west1-c,us-east5-a"
CASES = {
    "one good zone": ["--zone", "us-east5-a"],
    "serial failover": ["--zones", ZONES],
    "fan-out": ["--zones", ZONES, "--fan-out"],
}


def time_to_ready(case: str, delay: float) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ,
            TPUWIZARD_HOME=home,
            TPUWIZARD_SANDBOX_DELAY=str(delay),
            NO_GCE_CHECK="true",
        )
        if case != "one good zone":
            env["TPUWIZARD_SANDBOX_FAULTS"] = "stockout=us-central1-a,us-west1-c"
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "tpuwizard", "launch", "--sandbox", "--json"),
                *("--accelerator", "v5litepod-1", "--no-watchdog", *CASES[case]),
                *("--run-dir", str(Path(home) / "runs")),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        planned = ready = 0.0
        for line in proc.stdout:
            event = json.loads(line)["event"]
            if event == "planned":
                planned = time.perf_counter()
            elif event == "ready" and not ready:
                ready = time.perf_counter()
                proc.send_signal(signal.SIGTERM)  # deletes everything, verified, then exits
        proc.wait()
        state = Path(home) / "sandbox" / "state.json"
        left = json.loads(state.read_text())["nodes"] if state.exists() else {}
        if left or not ready:
            raise SystemExit(f"{case}: ready={bool(ready)}, left behind: {list(left)}")
        return ready - planned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delay", type=float, default=2.0, help="sandbox provisioning seconds")
    args = parser.parse_args()
    times: dict[str, list[float]] = {case: [] for case in CASES}
    for _ in range(args.runs):
        for case in CASES:
            times[case].append(time_to_ready(case, args.delay))
    base = statistics.median(times["one good zone"])
    for case, seen in times.items():
        median = statistics.median(seen)
        runs = ", ".join(f"{t:.2f}" for t in seen)
        print(f"{case:16} median {median:5.2f} s ({runs}), {median / base:.2f}x one good zone")


if __name__ == "__main__":
    main()
