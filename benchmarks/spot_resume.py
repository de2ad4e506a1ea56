"""A spot run that survives preemption, in the sandbox: how long a preemption costs, and what
copying the checkpoints home costs the script.

    .venv/bin/python benchmarks/spot_resume.py [--part recovery|copying|both] [--runs 3]

**recovery** (goal: at most 2x): `launch --route spot --checkpoints ckpt` runs
examples/resumable_train.py; the sandbox preempts the node once (``preempt_after``, set from a
first run so that it falls in the script, after checkpoints have come home). Timed from the
preemption (the sandbox's: READY + preempt_after) to the first step line of the resumed script,
against the same run's first attempt from its create call to its first step line (a fresh
launch). Also said: the preemption to tpuwizard's ``preempted`` event, and that to the new
node's ``resumed``. Each run is stopped with SIGTERM once the resumed step line has come (which
deletes and verifies everything; checked).

**copying** (goal: no slower than 5% with a checkpoint every minute): a script of fixed CPU work
per step, saving a ``--save-mb`` checkpoint set (npz + COMMITTED) every ``--save-every``
seconds, run ``--duration`` seconds with and without ``--checkpoints`` (copied every minute, and
every 10 s as a stress case); the script times its own steps (the saves left out) and prints
their mean. The cases are interleaved, so machine load weighs on each alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "resumable_train.py"
RECOVERY_GOAL = 2.0
COPY_GOAL = 0.05

WORKLOAD = """
import os, sys, time
from pathlib import Path
import numpy as np

duration, save_every, megabytes = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
folder = Path(os.environ.get("TPUWIZARD_CHECKPOINTS", "ckpt"))
a = np.random.default_rng(0).standard_normal((192, 192)).astype(np.float32)
state = np.random.default_rng(1).standard_normal(megabytes * 262144).astype(np.float32)
steps, start = [], time.time()
saved_at, saves = start, 0
while time.time() - start < duration:
    began = time.perf_counter()
    for _ in range(40):  # fixed work per step
        a = np.tanh(a @ a * 0.01)
    steps.append(time.perf_counter() - began)
    if time.time() - saved_at >= save_every:
        saves += 1
        target = folder / f"step_{len(steps):06d}"
        target.mkdir(parents=True, exist_ok=True)
        np.save(target / "state.npy", state + saves)
        (target / "COMMITTED").write_text("1\\n")
        saved_at = time.time()
print(f"BENCH steps {len(steps)} mean_ms {1000 * sum(steps) / len(steps):.3f} "
      f"median_ms {1000 * sorted(steps)[len(steps) // 2]:.3f} saves {saves}", flush=True)
"""


def launch(home: str, cwd: Path, args: list[str], faults: str = "") -> subprocess.Popen[str]:
    env = dict(
        os.environ,
        TPUWIZARD_HOME=home,
        TPUWIZARD_SANDBOX_DELAY="0",
        TPUWIZARD_SANDBOX_FAULTS=faults,
        NO_GCE_CHECK="true",
    )
    command = [sys.executable, "-m", "tpuwizard", "launch", "--sandbox", "--json"]
    return subprocess.Popen(
        [*command, "--no-preflight", "--route", "spot", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def sandbox_empty(home: str) -> bool:
    state = Path(home) / "sandbox" / "state.json"
    data = json.loads(state.read_text()) if state.exists() else {}
    return not data.get("nodes") and not data.get("queued") and not data.get("instances")


def recovery_run(accelerator: str, preempt_after: float) -> dict[str, float]:
    """One chain preempted once; the moments that matter, in epoch seconds."""
    with tempfile.TemporaryDirectory() as home:
        job = Path(home) / "job"
        job.mkdir()
        shutil.copy(EXAMPLE, job / "train.py")
        args = ["--accelerator", accelerator, "--zone", "us-central1-a"]
        args += ["--script", "job/train.py", "--checkpoints", "ckpt", "--checkpoint-every", "1s"]
        args += ["--", "--steps", "2000", "--save-every", "5", "--step-seconds", "0.1"]
        faults = f"preempt_after={preempt_after:g};preempt_times=1"
        proc = launch(home, Path(home), args, faults)
        marks: dict[str, float] = {}
        assert proc.stdout is not None
        for line in proc.stdout:
            event, now = json.loads(line), time.time()
            name = event["event"]
            if name == "billing_started" and "ready" not in marks:
                marks["ready"] = event["since"]
            if name == "resource_exists" and "create" not in marks:
                marks["create"] = now
            if name in ("preempted", "resumed", "checkpoint_copied") and name not in marks:
                marks[name] = now
            if name == "script_line" and event["text"].startswith("step "):
                key = "resumed_line" if "resumed" in marks else "first_line"
                if key not in marks:
                    marks[key] = now
                if key == "resumed_line":
                    proc.send_signal(signal.SIGTERM)  # measured: delete and verify the rest
        proc.wait(timeout=300)
        if not sandbox_empty(home):
            raise SystemExit("something was left in the sandbox")
        marks["preemption"] = marks["ready"] + preempt_after
        return marks


def recovery(runs: int, accelerator: str) -> None:
    # A probe run sets the preemption's moment: a few seconds into the script's steps.
    first = fresh_timing(accelerator)
    preempt_after = 2 * first + 6.0  # the load varies: room for the first attempt's steps
    print(
        f"READY to the script's first step line in a probe run: {first:.2f} s; preempting "
        f"{preempt_after:.1f} s after READY"
    )
    results = []
    while len(results) < runs:
        marks = recovery_run(accelerator, preempt_after)
        if "first_line" in marks and "resumed_line" in marks:
            results.append(marks)
            continue
        # Preempted before the script's first step (a busy moment): later next time.
        preempt_after *= 1.5
        print(f"  preempted before the first step line; now {preempt_after:.1f} s after READY")
    fresh = statistics.median(r["first_line"] - r["create"] for r in results)
    back = statistics.median(r["resumed_line"] - r["preemption"] for r in results)
    noticed = statistics.median(r["preempted"] - r["preemption"] for r in results)
    resumed = statistics.median(r["resumed"] - r["preemption"] for r in results)
    print(f"{accelerator} spot, TPU API, sandbox, provisioning delay 0, median of {runs}:")
    print(f"  fresh launch: create -> first step line           {fresh:6.2f} s")
    print(f"  preemption -> tpuwizard's preempted event          {noticed:6.2f} s")
    print(f"  preemption -> checkpoint back, script restarted    {resumed:6.2f} s")
    print(f"  preemption -> first resumed step line              {back:6.2f} s")
    verdict = "within" if back <= RECOVERY_GOAL * fresh else "OVER"
    print(f"  = {back / fresh:.2f}x a fresh launch ({verdict} the {RECOVERY_GOAL:g}x goal)")


def fresh_timing(accelerator: str) -> float:
    """READY to the first step line of an unpreempted run (stopped there)."""
    with tempfile.TemporaryDirectory() as home:
        job = Path(home) / "job"
        job.mkdir()
        shutil.copy(EXAMPLE, job / "train.py")
        args = ["--accelerator", accelerator, "--zone", "us-central1-a"]
        args += ["--script", "job/train.py", "--", "--steps", "2000", "--step-seconds", "0.1"]
        proc = launch(home, Path(home), args)
        ready, first = None, None
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "billing_started":
                ready = event["since"]
            if event["event"] == "script_line" and event["text"].startswith("step "):
                first = time.time() - (ready or time.time())
                proc.send_signal(signal.SIGTERM)
                break
        proc.wait(timeout=300)
        if first is None:
            raise SystemExit("the probe run printed no step line")
        return first


def copying_run(
    case: str, every: str | None, duration: float, save_every: float, mb: int
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        job = Path(home) / "job"
        job.mkdir()
        (job / "work.py").write_text(WORKLOAD)
        args = ["--accelerator", "v5litepod-1", "--zone", "us-central1-a"]
        args += ["--script", "job/work.py"]
        if every is not None:
            args += ["--checkpoints", "ckpt", "--checkpoint-every", every]
        args += ["--", str(duration), str(save_every), str(mb)]
        proc = launch(home, Path(home), args)
        result, copied = None, 0
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "checkpoint_copied":
                copied += 1
            if event["event"] == "script_line" and event["text"].startswith("BENCH "):
                words = event["text"].split()
                result = dict(zip(words[1::2], map(float, words[2::2]), strict=True))
        if proc.wait(timeout=300) != 0 or result is None:
            raise SystemExit(f"{case}: the launch failed")
        result["copied"] = copied
        return result


def copying(runs: int, duration: float, save_every: float, mb: int) -> None:
    cases = {"no --checkpoints": None, "copied every 1m": "1m", "copied every 10s": "10s"}
    found: dict[str, list[dict[str, float]]] = {case: [] for case in cases}
    for _ in range(runs):
        for case, every in cases.items():
            found[case].append(copying_run(case, every, duration, save_every, mb))
    base = statistics.median(r["mean_ms"] for r in found["no --checkpoints"])
    print(
        f"Step time, {duration:g} s of fixed CPU work per run, a {mb} MiB checkpoint every "
        f"{save_every:g} s, v5litepod-1 sandbox, median of {runs}:"
    )
    for case, results in found.items():
        mean = statistics.median(r["mean_ms"] for r in results)
        sets = statistics.median(r["copied"] for r in results)
        slower = mean / base - 1
        mark = ""
        if case == "copied every 1m":
            mark = f" ({'within' if slower <= COPY_GOAL else 'OVER'} the {COPY_GOAL:.0%} goal)"
        print(f"  {case:<18} mean step {mean:8.3f} ms  {slower:+6.1%}  sets home {sets:g}{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("recovery", "copying", "both"), default="both")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--accelerator", default="v5litepod-4")
    parser.add_argument("--duration", type=float, default=150.0, help="copying: seconds a run")
    parser.add_argument("--save-every", type=float, default=60.0, help="copying: seconds")
    parser.add_argument("--save-mb", type=int, default=64, help="copying: a set's size")
    args = parser.parse_args()
    if args.part in ("recovery", "both"):
        recovery(args.runs, args.accelerator)
    if args.part in ("copying", "both"):
        copying(args.runs, args.duration, args.save_every, args.save_mb)


if __name__ == "__main__":
    main()
