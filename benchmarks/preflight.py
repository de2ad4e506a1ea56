"""The preflight with every API at 200 ms per request: its checks at once against one by one.

    .venv/bin/python benchmarks/preflight.py [--latency-ms 200] [--runs 5]

Runs the session's preflight (what `launch` and `up` run before their first create) against a
practice sandbox whose every request waits ``--latency-ms`` first: `--backend auto` for v6e-4 on
spot (Compute Engine's quota read first, then every check) and v5litepod-4 on the TPU API. For
comparison, the same checks run one after another. Goal: under 1 s at 200 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--runs", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["TPUWIZARD_HOME"] = home
        os.environ["TPUWIZARD_SANDBOX_FAULTS"] = f"latency_ms={args.latency_ms}"
        from tpuwizard.core.preflight.ask import PreflightAsk
        from tpuwizard.core.preflight.run import jobs_for
        from tpuwizard.session import preflight
        from tpuwizard.session.session import Session

        session = Session(practice=True)
        _ = session.cloud  # starts the sandbox: not part of the preflight's time
        cases = (("v6e-4", "us-east5-a", "spot"), ("v5litepod-4", "us-central1-a", "vm"))
        for accelerator, zone, route in cases:
            times, checks = [], []
            for _ in range(args.runs):
                start = time.perf_counter()
                result = preflight.run_preflight(session, accelerator, zone, route, "auto")
                times.append(time.perf_counter() - start)
                checks = result.checks
            backend = result.choice.backend if result.choice else "?"
            verdicts = ", ".join(f"{c.name} {c.verdict.value}" for c in checks)
            # The first run also opens the backend's client (Compute Engine's imports its library).
            first, rest = times[0], times[1:] or times
            print(
                f"{accelerator} {route} (auto -> {backend}): first {first:.2f} s; then median "
                f"{statistics.median(rest):.2f} s ({min(rest):.2f}-{max(rest):.2f} s); {verdicts}"
            )
            _, reach = preflight._reach(session, backend, zone)
            ask = PreflightAsk(session.project or "", accelerator, zone, route, backend)
            start = time.perf_counter()
            for job in jobs_for(ask, reach):
                job.run()
            print(f"  the same checks one after another: {time.perf_counter() - start:.2f} s")
        session.close()


if __name__ == "__main__":
    main()
