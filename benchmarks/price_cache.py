"""A price answered from the disk cache of the Billing Catalog read (goal: under 50 ms).

    .venv/bin/python benchmarks/price_cache.py [--runs 21] [--rows 3000]

Writes a cache of ``--rows`` per-region TPU prices (by default 3000: generations x provisioning
models x regions x SKUs per place, well above what one read of the Compute Engine service's TPU
SKUs holds), then, in a fresh interpreter each run, times what a front end does
for one figure: load the cache and quote v6e-4 spot in us-east5 (and checks that doing so
imported neither the catalog's TOML reader nor dataclasses, typing or google.cloud). Reported:
the median of the in-process time (load + quote, imports included), of the whole interpreter
start to exit, and of a bare `python -c pass` in the same turn (how loaded the machine is).
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

CHILD = """
import time
t = time.perf_counter()
from pathlib import Path
from tpuwizard.core.prices import cache
from tpuwizard.core.prices.quote import quote
book = cache.load(cache.cache_file(Path({folder!r}), practice=False))
q = quote(book, "", "v6e-4", "spot", "us-east5-a")
ms = (time.perf_counter() - t) * 1000
assert q.source == "catalog", q
import sys
heavy = [m for m in ("tomllib", "dataclasses", "typing", "google.cloud") if m in sys.modules]
assert not heavy, f"a price from the cache imported {{heavy}}"
print(ms)
"""


def write_cache(folder: Path, rows: int) -> None:
    from tpuwizard.core.prices import cache
    from tpuwizard.core.prices.cache import PriceBook, SkuPrice

    prices = [SkuPrice("v6e", "spot", "us-east5", 1.40, "BENCH-0000-0000")]
    for i in range(rows - 1):  # other regions and generations, as a large read would hold
        gen, model = ("v5e", "v5p", "v6e")[i % 3], ("on-demand", "spot", "flex")[i % 3]
        prices.append(SkuPrice(gen, model, f"region-{i}", 1.0 + i / 1000, f"BENCH-{i:09d}"))
    cache.save(cache.cache_file(folder, practice=False), PriceBook(time.time(), tuple(prices)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        write_cache(Path(folder), args.rows)
        size = (Path(folder) / "prices-google.json").stat().st_size
        inside, whole, bare = [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()  # the machine's pace now: a bare interpreter
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", CHILD.format(folder=folder)],
                capture_output=True,
                text=True,
                check=True,
                env=dict(os.environ),
            )
            whole.append((time.perf_counter() - start) * 1000)
            inside.append(float(out.stdout.strip()))
    result = {
        "rows": args.rows,
        "cache_bytes": size,
        "load_and_quote_ms_median": round(statistics.median(inside), 1),
        "interpreter_ms_median": round(statistics.median(whole), 1),
        "bare_python_ms_median": round(statistics.median(bare), 1),
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(result))
    verdict = "goal met" if result["load_and_quote_ms_median"] < 50 else "OVER GOAL"
    print(f"a price from the cache: {result['load_and_quote_ms_median']} ms ({verdict})")


if __name__ == "__main__":
    main()
