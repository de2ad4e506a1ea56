"""How long `tpuwizard fit 48 --json` takes from a cold interpreter, against `python -c pass`.

    .venv/bin/python benchmarks/cli_startup.py [--runs 20]

Prints the median and the best wall time of each, and tpuwizard's cost above bare Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def time_command(cmd: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "tpuwizard fit 48 --json": [sys.executable, "-m", "tpuwizard", "fit", "48", "--json"],
        "tpuwizard fit 48 (table)": [sys.executable, "-m", "tpuwizard", "fit", "48"],
    }
    medians = {}
    for label, cmd in commands.items():
        time_command(cmd, 2)  # warm the file cache
        samples = time_command(cmd, args.runs)
        medians[label] = statistics.median(samples)
        print(
            f"{label:28s} median {medians[label] * 1000:7.1f} ms   "
            f"best {min(samples) * 1000:7.1f} ms   ({args.runs} runs)"
        )
    extra = medians["tpuwizard fit 48 --json"] - medians["python -c pass"]
    print(f"tpuwizard fit --json costs {extra * 1000:.1f} ms above bare Python start-up")


if __name__ == "__main__":
    main()
