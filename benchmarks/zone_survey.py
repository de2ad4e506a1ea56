"""Zone survey: every zone's accelerator types asked one by one, and all at once.

    .venv/bin/python benchmarks/zone_survey.py [--latency-ms 200]

Runs the real TPU client against the sandbox with a fixed per-request latency, so the figure
shows what the concurrency buys when the API is slow to answer.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.zones import MAX_WORKERS, live
from tpuwizard.sandbox.server import make_server
from tpuwizard.sandbox.serving import start_in_thread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        server = make_server(Path(home), faults=f"latency_ms={args.latency_ms}")
        start_in_thread(server)
        cloud = TpuCloud("bench-project", endpoint=server.endpoint)
        import os

        os.environ["TPUWIZARD_HOME"] = home  # keep the cache out of the user's state
        results = {}
        for label, workers in (("sequential", 1), (f"concurrent ({MAX_WORKERS})", MAX_WORKERS)):
            start = time.perf_counter()
            survey = live(cloud, refresh=True, max_workers=workers)
            results[label] = time.perf_counter() - start
            print(
                f"{label:16s} {len(survey.zones)} zones in {results[label]:.2f} s "
                f"({args.latency_ms} ms per request)"
            )
        server.shutdown()
    seq, conc = results.values()
    print(f"speed-up {seq / conc:.1f}x")


if __name__ == "__main__":
    main()
