"""How long `tpuwizard fit --program examples/transformer.py` takes over six slices, with an
empty compile cache and then again from the cache.

    .venv/bin/python benchmarks/program_fit.py [--runs 3]

Each run is the real command in a fresh interpreter (the libtpu compiles run in its worker
subprocess); "cold" runs start from an empty state directory, "cached" ones repeat the command
over the same directory. Prints the median and best of each, and the per-slice compile times.
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SLICES = "v5litepod-1,v5litepod-4,v5litepod-8,v6e-1,v6e-4,v6e-8"


def plan(home: str) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "tpuwizard", "fit", "--json", "--slices", SLICES]
    cmd += ["--program", str(REPO / "examples" / "transformer.py")]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TPUWIZARD_HOME": home},
    )
    return time.perf_counter() - start, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cold, cached = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as home:
            seconds, doc = plan(home)
            cold.append(seconds)
            again, doc_again = plan(home)
            cached.append(again)
            assert all(s["cached"] for s in doc_again["slices"]), "the second plan recompiled"
    for s in doc["slices"]:
        print(
            f"  {s['name']:<12} compile {s.get('compile_seconds', 0):6.2f} s  "
            f"peak {s['per_device_bytes']['peak'] or 0:>12,} B  fits {s['fits']}"
        )
    for label, samples in (("cold", cold), ("cached", cached)):
        print(
            f"{label:7s} median {statistics.median(samples):6.2f} s   best {min(samples):6.2f} s"
            f"   ({args.runs} runs, 6 slices)"
        )


if __name__ == "__main__":
    main()
