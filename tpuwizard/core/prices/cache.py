"""The prices read from the Billing Catalog, on disk with the time they were read: re-read when
older than a day (Google: the latest pricing is "up to 12 hours old") or when asked; a torn or
foreign file is ignored (and replaced by the next read). One file for Google's catalog and one
for the practice sandbox's, so the sandbox's figures never stand in for Google's."""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from tpuwizard.core.prices.skus import SkuPrice

MAX_AGE_S = 24 * 3600
_VERSION = 1


@dataclass(frozen=True)
class PriceBook:
    """Every TPU price one read of the catalog found, and when it was read."""

    read_at: float
    prices: tuple[SkuPrice, ...]

    @functools.cached_property
    def _index(self) -> dict[tuple[str, str, str], float]:
        # The first SKU for a place wins, as a reader scanning in Google's order would take it.
        index: dict[tuple[str, str, str], float] = {}
        for p in self.prices:
            index.setdefault((p.generation, p.model, p.region), p.usd_per_chip_hour)
        return index

    def per_chip_hour(self, generation: str, model: str, region: str) -> float | None:
        return self._index.get((generation, model, region))

    def generations(self) -> set[str]:
        return {p.generation for p in self.prices}

    def fresh(self, now: float | None = None) -> bool:
        return (now if now is not None else time.time()) - self.read_at < MAX_AGE_S

    @property
    def date(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.read_at))


def cache_file(folder: Path, practice: bool) -> Path:
    return folder / ("prices-practice.json" if practice else "prices-google.json")


def load(path: Path) -> PriceBook | None:
    """The book saved at ``path``; None when there is none, or it is torn or not ours."""
    try:
        saved = json.loads(path.read_text("utf-8"))
        if saved.get("version") != _VERSION:
            return None
        rows = saved["prices"]
        prices = tuple(SkuPrice(*row) for row in rows)
        if not all(isinstance(p.usd_per_chip_hour, int | float) for p in prices):
            return None  # not ours: a figure that is not a number
        return PriceBook(float(saved["read_at"]), prices)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(path: Path, book: PriceBook) -> None:
    """Write ``book`` whole or not at all (a temporary file renamed over the old one), so a
    reader never meets half a file of ours."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [[p.generation, p.model, p.region, p.usd_per_chip_hour, p.sku] for p in book.prices]
    text = json.dumps({"version": _VERSION, "read_at": book.read_at, "prices": rows})
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(text, "utf-8")
    os.replace(temporary, path)
