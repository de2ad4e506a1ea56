"""Copying a 3 GiB file back from a worker: bytes and SHA-256 equal, memory bounded.

    .venv/bin/python benchmarks/fetch_large.py [--gib 3] [--before]

The file (random bytes) is made in a worker home of the sandbox's kind and fetched through the
local transport, as ``launch --fetch`` and ``run --fetch`` do. The fetch runs in a fresh
interpreter so that its peak RSS is its own: this computer's side (tpuwizard), and the worker's
side (the largest process it waited for). ``--before`` also runs the earlier way (the worker
wrote the whole file in one write, this side held it all in memory) for comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK = 16 << 20

# Run in the fresh interpreter: argv = mode, worker home, relative path, target.
CHILD = """
import json, resource, sys, time
from pathlib import Path
from tpuwizard.core.remote.transports import LocalTransport, shell, Raw
mode, home, rel, target = sys.argv[1:5]
transport = LocalTransport([Path(home)])
start = time.perf_counter()
if mode == "now":
    from tpuwizard.core.remote.fetch import fetch_file
    fetch_file(transport, 0, ".", sys.executable, rel, Path(target))
else:  # the earlier way, kept here only to measure it
    reader = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
    data = transport.run_bytes(0, shell(sys.executable, "-c", reader, rel), timeout=3600)
    Path(target).write_bytes(data)
seconds = time.perf_counter() - start
mine = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kib": mine, "worker_rss_kib": worker}))
"""


def make_file(path: Path, size: int) -> str:
    """Random bytes, written a block at a time; their SHA-256."""
    sha = hashlib.sha256()
    with path.open("wb") as out:
        left = size
        while left:
            block = os.urandom(min(BLOCK, left))
            sha.update(block)
            out.write(block)
            left -= len(block)
    return sha.hexdigest()


def sha256_of(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(BLOCK):
            sha.update(block)
    return sha.hexdigest()


def fetch(mode: str, home: Path, target: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(home), "big.bin", str(target)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=3.0)
    parser.add_argument("--before", action="store_true", help="also measure the earlier way")
    args = parser.parse_args()
    size = int(args.gib * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="tpuwizard-fetch-") as tmp:
        home = Path(tmp) / "w0"
        home.mkdir()
        source = home / "big.bin"
        started = time.perf_counter()
        expected = make_file(source, size)
        print(f"made {size:,} random bytes in {time.perf_counter() - started:.1f} s")
        for mode in ["now", "before"] if args.before else ["now"]:
            target = Path(tmp) / f"fetched-{mode}.bin"
            result = fetch(mode, home, target)
            arrived = target.stat().st_size
            same = arrived == size and sha256_of(target) == expected
            print(
                f"{mode}: {arrived:,} of {size:,} bytes, sha256 "
                f"{'equal' if same else 'DIFFERENT'}, {result['seconds']:.1f} s "
                f"({size / result['seconds'] / 1e6:.0f} MB/s); peak RSS here "
                f"{result['rss_kib'] / 1024:.0f} MiB, on the worker "
                f"{result['worker_rss_kib'] / 1024:.0f} MiB"
            )
            target.unlink()


if __name__ == "__main__":
    main()
