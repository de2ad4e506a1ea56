"""Time to receipt in the sandbox, against running the verifier directly.

    .venv/bin/python benchmarks/launch_sandbox.py [--runs 3] [--accelerator v5litepod-4]

Runs `tpuwizard launch --sandbox --json` with no provisioning delay and timestamps each event as
it arrives: start -> receipt saved, receipt saved -> delete issued, delete issued -> verified
gone. The baseline is the verifier run directly on as many CPU devices.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from tpuwizard.core.evidence.verifier import cpu_device_env, verifier_path
from tpuwizard.core.plan import catalog


def one_launch(accelerator: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        env = dict(
            os.environ, TPUWIZARD_HOME=home, TPUWIZARD_SANDBOX_DELAY="0", NO_GCE_CHECK="true"
        )
        start = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tpuwizard",
                "launch",
                "--sandbox",
                "--json",
                "--accelerator",
                accelerator,
                "--zone",
                "us-central1-a",
            ],
            cwd=home,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        marks: dict[str, float] = {}
        assert proc.stdout is not None
        for line in proc.stdout:
            marks.setdefault(json.loads(line)["event"], time.perf_counter() - start)
        if proc.wait() != 0:
            raise SystemExit("the launch failed")
    return marks


def direct_verifier(devices: int) -> float:
    env = cpu_device_env(devices)
    env["JAX_PLATFORMS"] = "cpu"
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(verifier_path()), "--expect", "cpu"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--accelerator", default="v5litepod-4")
    args = parser.parse_args()
    devices = catalog.parse_accelerator(args.accelerator).devices_per_vm
    runs = [one_launch(args.accelerator) for _ in range(args.runs)]
    direct = statistics.median(direct_verifier(devices) for _ in range(args.runs))

    def median(a: str, b: str) -> float:
        return statistics.median(r[b] - r.get(a, 0.0) for r in runs)

    print(f"{args.accelerator}, sandbox, provisioning delay 0, median of {args.runs}:")
    print(f"  start -> READY                    {median('planned', 'ready'):6.2f} s")
    print(f"  READY -> JAX bootstrapped         {median('ready', 'versions'):6.2f} s")
    print(f"  start -> receipt saved            {median('planned', 'receipt_saved'):6.2f} s")
    print(
        f"  receipt saved -> delete issued    {median('receipt_saved', 'teardown_started'):6.2f} s"
    )
    print(
        f"  delete issued -> verified gone    "
        f"{median('teardown_started', 'teardown_verified'):6.2f} s"
    )
    print(f"  the verifier run directly ({devices} CPU devices) {direct:6.2f} s")


if __name__ == "__main__":
    main()
