"""A price from the disk cache answers without the catalog (issue 33, under 50 ms): the cache
keeps each slice name's generation and chips, so a hit imports neither tomllib (catalog.toml)
nor dataclasses, typing or google.cloud; a miss still asks the catalog and says why."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tpuwizard.core.prices import cache
from tpuwizard.core.prices.cache import SPOT, PriceBook, SkuPrice
from tpuwizard.core.prices.quote import CATALOG, OFFLINE, quote

CHILD = """
import json, sys
from pathlib import Path
from tpuwizard.core.prices import cache
from tpuwizard.core.prices.quote import quote
book = cache.load(cache.cache_file(Path(sys.argv[1]), practice=False))
q = quote(book, "", "v6e-4", "spot", "us-east5-a")
heavy = [m for m in ("tomllib", "dataclasses", "typing", "google.cloud") if m in sys.modules]
print(json.dumps({"source": q.source, "hourly": q.hourly, "heavy": heavy}))
"""


def test_a_hit_from_the_cache_imports_no_catalog_dataclasses_or_typing(tmp_path):
    read = PriceBook(time.time(), (SkuPrice("v6e", SPOT, "us-east5", 1.40, "S"),))
    cache.save(cache.cache_file(tmp_path, practice=False), read)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == {"source": CATALOG, "hourly": 5.6, "heavy": []}


def test_a_book_from_disk_prices_by_its_saved_slices_and_misses_by_the_catalog(tmp_path):
    path = cache.cache_file(tmp_path, practice=False)
    cache.save(path, PriceBook(time.time(), (SkuPrice("v5p", SPOT, "us-east5", 1.30, "S"),)))
    book = cache.load(path)
    assert book is not None and book.slices["v5p-8"] == ("v5p", 4)  # 8 TensorCores, 4 chips
    assert quote(book, "", "v5p-8", "spot", "us-east5-a").hourly == pytest.approx(5.2)
    missed = quote(book, "", "v5p-8", "spot", "europe-west4-b")
    assert missed.source == OFFLINE and "no spot SKU for v5p" in missed.note
