"""Iterating on a kept node in the sandbox: a second `run` against the first, and the seconds
from saving a file under `watch` to the first new output line.

    .venv/bin/python benchmarks/iterate_sandbox.py [--saves 5] [--accelerator v5litepod-1]

`up` once (not timed in the medians), then: `run` of a script that imports jax (first copy of
the folder), the same `run` again (nothing to copy), and a `run` after a one-line edit. Then
`watch` the folder and save a new version `--saves` times: each time from the write to the line
the new version prints first. The script prints that line before it imports jax, as a training
script's first print usually comes early; the import follows and is not in the figure.
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

SCRIPT = "print('version {n}', flush=True)\nimport jax\nprint('devices', jax.device_count())\n"


def tpuwizard(*args: str) -> list[str]:
    return [sys.executable, "-m", "tpuwizard", *args, "--sandbox"]


def timed_run(cwd: Path, env: dict[str, str], script: Path) -> float:
    start = time.perf_counter()
    subprocess.run(tpuwizard("run", str(script)), cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=5)
    parser.add_argument("--accelerator", default="v5litepod-1")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        env = dict(
            os.environ,
            TPUWIZARD_HOME=str(cwd / "state"),
            TPUWIZARD_SANDBOX_DELAY="0",
            TPUWIZARD_SANDBOX_LINGER="2",
            NO_GCE_CHECK="true",
        )
        project = cwd / "project"
        project.mkdir()
        script = project / "train.py"
        script.write_text(SCRIPT.format(n=0))
        start = time.perf_counter()
        up = subprocess.run(
            tpuwizard("up", "--json", "--accelerator", args.accelerator, "--zone", "us-central1-a"),
            cwd=cwd,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        up_s = time.perf_counter() - start
        name = json.loads(up.stdout.splitlines()[-1])["name"]  # the last event: Kept
        try:
            first = timed_run(cwd, env, script)
            second = timed_run(cwd, env, script)
            script.write_text(SCRIPT.format(n=1))
            edited = timed_run(cwd, env, script)
            latencies = watch_latencies(cwd, env, script, args.saves)
        finally:
            subprocess.run(tpuwizard("down", name, "--yes"), cwd=cwd, env=env, capture_output=True)
            info = cwd / "state" / "sandbox" / "server.json"
            if info.exists():
                os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGTERM)
    print(f"up (create, bootstrap, verify, keep): {up_s:.2f} s")
    print(f"run, first (copies the folder):       {first:.2f} s")
    print(f"run, second (nothing changed):        {second:.2f} s")
    print(f"run after a one-line edit:            {edited:.2f} s")
    print(
        f"watch, save to first new line: median {statistics.median(latencies):.2f} s "
        f"(min {min(latencies):.2f}, max {max(latencies):.2f}, {len(latencies)} saves)"
    )


def watch_latencies(cwd: Path, env: dict[str, str], script: Path, saves: int) -> list[float]:
    proc = subprocess.Popen(
        tpuwizard("watch", str(script)),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    out = iter(proc.stdout)

    def wait_for(text: str) -> None:
        for line in out:
            if line.strip() == text:
                return
        raise SystemExit(f"watch ended before printing {text!r}")

    latencies = []
    try:
        wait_for("devices 1")  # the first run has finished: the loop waits for a save
        for n in range(2, saves + 2):
            saved = time.perf_counter()
            script.write_text(SCRIPT.format(n=n))
            wait_for(f"version {n}")
            latencies.append(time.perf_counter() - saved)
            wait_for("devices 1")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    return latencies


if __name__ == "__main__":
    main()
