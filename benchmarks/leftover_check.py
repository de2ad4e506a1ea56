"""The wizard's leftover check and `status`, in a fresh interpreter, at 200 ms per request.

    .venv/bin/python benchmarks/leftover_check.py [--latency-ms 200] [--runs 3]

Two ledgers, each in its own TPUWIZARD_HOME: none, and an open record on each backend (a TPU API
node and a Compute Engine instance, both long gone from the practice sandbox, so each backend is
asked about its record and listed). For each:

- the leftover check as the wizard runs it beside its first steps (tui/leftover_check.py), in a
  fresh interpreter: the practice sandbox started and the TPU API's cloud opened
  (`Session.cloud`), then `Session.find_leftovers` (both backends at once; Compute Engine only
  with its record, as plain REST reads), each part timed;
- `tpuwizard status --sandbox`, the whole command from a fresh interpreter.

Every request the sandbox serves waits ``--latency-ms`` first (TPUWIZARD_SANDBOX_FAULTS). Goals
(issue 31, item 8): the check at most 2 s, `status` at most 1.5 s, with records on both
backends. Each figure is the median of ``--runs``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECK = """
import json, sys, time
start = time.perf_counter()
from tpuwizard.session.session import Session
session = Session.for_walk(True)
imported = time.perf_counter()
_ = session.cloud  # the practice sandbox started, the TPU API's client made
opened = time.perf_counter()
found = session.find_leftovers()
done = time.perf_counter()
session.close()
print(json.dumps({"import": imported - start, "open": opened - imported,
                  "check": done - opened, "found": len(found), "unchecked": len(found.unchecked)}))
"""


def record_both(home: Path) -> None:
    """An open ledger record on each backend, as a launch killed after create leaves one, in
    the ledger practice reads (session/runtime.py: ledger_for)."""
    from tpuwizard.core.launch.records.ledger import Ledger, Resource
    from tpuwizard.session.practice.sandbox import PRACTICE_PROJECT

    ledger = Ledger(home / "sandbox" / "ledger.jsonl")
    for name, backend in (("tpuwizard-bench-tpu", "tpu-api"), ("tpuwizard-bench-ce", "compute")):
        resource = Resource(
            "node", PRACTICE_PROJECT, "us-central1-a", name, "v5litepod-4", "r1", backend=backend
        )
        ledger.record("intent", resource)
        ledger.record("created", resource)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import tpuwizard

    # The tpuwizard imported here, bytecode compiled as a pip install leaves it, run from its
    # own folder (a fresh interpreter's sys.path starts with the current one).
    tree = Path(tpuwizard.__file__).resolve().parent
    compileall.compile_dir(tree, quiet=1)
    base = {k: v for k, v in os.environ.items() if not k.startswith("TPUWIZARD_")}
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    base["TPUWIZARD_SANDBOX_FAULTS"] = f"latency_ms={args.latency_ms}"
    base["CLOUDSDK_CONFIG"] = tempfile.mkdtemp()  # no gcloud account: practice as a new user
    base.pop("GOOGLE_APPLICATION_CREDENTIALS", None)
    for label, records in (("no records", False), ("a record on each backend", True)):
        parts: dict[str, list[float]] = {"import": [], "open": [], "check": []}
        status: list[float] = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as home:
                if records:
                    record_both(Path(home))
                env = dict(base, TPUWIZARD_HOME=home)
                done = subprocess.run(
                    [sys.executable, "-c", CHECK],
                    env=env,
                    capture_output=True,
                    text=True,
                    cwd=tree.parent,
                )
                if done.returncode != 0:
                    sys.exit(f"{label}: the check failed: {done.stderr[-2000:]}")
                figures = json.loads(done.stdout.splitlines()[-1])
                for key in parts:
                    parts[key].append(figures[key])
            with tempfile.TemporaryDirectory() as home:
                if records:
                    record_both(Path(home))
                start = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "tpuwizard", "status", "--sandbox"],
                    env=dict(base, TPUWIZARD_HOME=home),
                    capture_output=True,
                    cwd=tree.parent,
                )
                status.append(time.perf_counter() - start)
        median = {k: statistics.median(v) for k, v in parts.items()}
        whole = median["open"] + median["check"]
        print(
            f"{label}: leftover check {whole:.2f} s (the sandbox and the TPU API's client "
            f"{median['open']:.2f} s, then find_leftovers {median['check']:.2f} s; session "
            f"imports before it {median['import']:.2f} s); status {statistics.median(status):.2f}"
            f" s (goals: check <= 2 s, status <= 1.5 s; {args.latency_ms} ms per request)"
        )


if __name__ == "__main__":
    main()
