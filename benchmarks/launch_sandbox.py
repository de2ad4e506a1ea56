"""Time to receipt in the sandbox, against running the verifier directly.

    .venv/bin/python benchmarks/launch_sandbox.py [--runs 3] [--accelerator v5litepod-4]
    .venv/bin/python benchmarks/launch_sandbox.py --backend compute --accelerator v6e-4

Runs `tpuwizard launch --sandbox --json` with no provisioning delay and timestamps each event as
it arrives: start -> receipt saved, receipt saved -> delete issued, delete issued -> verified
gone. The baseline is the verifier run directly on as many CPU devices; the goal is a whole
launch, start to verified teardown, within 2.5 times that.

It also times the worker bootstrap alone (uv from the image's ``pip --user``, a venv on a
uv-managed Python, the pinned JAX) on fresh sandbox workers: with an empty uv cache (cold, as a
new VM has) and with the cache an earlier bootstrap left (warm).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from tpuwizard.core.evidence.verifier import cpu_device_env, verifier_path
from tpuwizard.core.plan import catalog

GOAL = 2.5  # a whole sandbox launch against the verifier alone


def one_launch(accelerator: str, backend: str, zone: str) -> dict[str, float]:
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
                zone,
                "--backend",
                backend,
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


def bootstrap_times(runs: int) -> tuple[float, float]:
    """Median seconds of the bootstrap script on fresh sandbox workers: cold, then warm cache."""
    import shlex
    from pathlib import Path

    from tpuwizard.core.cloud.tpu.client import TpuCloud
    from tpuwizard.core.cloud.types import NodeRequest
    from tpuwizard.core.plan.catalog import parse_accelerator
    from tpuwizard.core.remote.bootstrap import bootstrap_script, sandbox_plan
    from tpuwizard.core.remote.transports import LocalTransport
    from tpuwizard.sandbox.model import worker_home
    from tpuwizard.sandbox.server import make_server
    from tpuwizard.sandbox.serving import start_in_thread
    from tpuwizard.sandbox.workers.image import worker_path

    script = f"bash -c {shlex.quote(bootstrap_script(sandbox_plan()))}"
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = make_server(Path(tmp) / "sandbox", delay=0)
        start_in_thread(server)
        cloud = TpuCloud("bench", endpoint=server.endpoint)
        cache = Path(tmp) / "uv-cache"
        try:
            for i in range(2 * runs):
                name = f"boot-{i}"
                request = NodeRequest(
                    "us-central1-a", name, parse_accelerator("v5litepod-4"), "bench"
                )
                node = cloud.wait_for_node("us-central1-a", name, cloud.create_node(request))
                home = worker_home(server.state.home, cloud.node_path(node.zone, name), 0)
                vm = LocalTransport([home], worker_path(home.parent))
                if i % 2 == 0:  # cold: a cache nobody has used
                    shutil.rmtree(cache, ignore_errors=True)
                os.environ["UV_CACHE_DIR"] = str(cache)
                start = time.perf_counter()
                result = vm.run(0, script)
                (cold if i % 2 == 0 else warm).append(time.perf_counter() - start)
                if result.code != 0:
                    raise SystemExit(f"bootstrap failed: {result.stdout}{result.stderr}")
        finally:
            os.environ.pop("UV_CACHE_DIR", None)
            server.shutdown()
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--accelerator", default="v5litepod-4")
    parser.add_argument("--backend", default="tpu-api", choices=("tpu-api", "compute"))
    parser.add_argument("--zone", help="default: us-central1-a (us-east5-b on Compute Engine)")
    args = parser.parse_args()
    zone = args.zone or ("us-east5-b" if args.backend == "compute" else "us-central1-a")
    devices = catalog.parse_accelerator(args.accelerator).devices_per_vm
    runs, directs = [], []
    for _ in range(args.runs):  # interleaved, so a busy moment weighs on both sides alike
        runs.append(one_launch(args.accelerator, args.backend, zone))
        directs.append(direct_verifier(devices))
    direct = statistics.median(directs)

    def median(a: str, b: str) -> float:
        return statistics.median(r[b] - r.get(a, 0.0) for r in runs)

    print(
        f"{args.accelerator} on {args.backend}, sandbox, provisioning delay 0, "
        f"median of {args.runs}:"
    )
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
    whole = median("planned", "teardown_verified")
    verdict = "within" if whole <= GOAL * direct else "OVER"
    print(
        f"  start -> verified gone            {whole:6.2f} s = {whole / direct:.1f}x the "
        f"verifier alone ({verdict} the {GOAL}x goal)"
    )
    cold, warm = bootstrap_times(args.runs)
    print(f"  worker bootstrap with uv, cold uv cache {cold:6.2f} s; warm cache {warm:6.2f} s")


if __name__ == "__main__":
    main()
