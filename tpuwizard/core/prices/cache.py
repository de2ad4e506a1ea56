"""The prices read from the Billing Catalog, on disk with the time they were read: re-read when
older than a day (Google: the latest pricing is "up to 12 hours old") or when asked; a torn or
foreign file is ignored (and replaced by the next read). One file for Google's catalog and one
for the practice sandbox's, so the sandbox's figures never stand in for Google's.

The file is read as untrusted input (core/untrusted.py): a regular file of at most
:data:`MAX_CACHE_BYTES`, its read time sane (not in the future: it would be "fresh" for ever),
every price a finite amount above zero and below :data:`MOST_USD_PER_CHIP_HOUR`. A file that
is not is set aside whole, with why, and the catalog read again: a price shown as the Billing
Catalog's, or a ``--budget`` held by it, is never one the catalog did not give."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

from tpuwizard.core import untrusted

TYPE_CHECKING = False  # typing itself is not imported on a cache hit
if TYPE_CHECKING:
    from typing import Any

# Plain classes, not dataclasses, and the catalog read only where a figure is missed: a price
# from this cache answers in a fresh process without importing dataclasses, typing or tomllib
# (benchmarks/price_cache.py; goal: under 50 ms).

MAX_AGE_S = 24 * 3600
# Google's catalog has a few hundred TPU SKU-regions; a file past this is none tpuwizard wrote.
MAX_CACHE_BYTES = 1 * untrusted.MIB
_VERSION = 2  # 2: with the slice names' generation and chips, so a hit reads no catalog
ON_DEMAND, SPOT, FLEX = "on-demand", "spot", "flex"  # the provisioning models priced


class SkuPrice:
    """One SKU's price per chip-hour in one region."""

    __slots__ = ("generation", "model", "region", "sku", "usd_per_chip_hour")

    def __init__(
        self, generation: str, model: str, region: str, usd_per_chip_hour: float, sku: str
    ) -> None:
        self.generation = generation  # the catalog's key: v5e, v5p, v6e
        self.model = model  # ON_DEMAND, SPOT or FLEX
        self.region = region
        self.usd_per_chip_hour = usd_per_chip_hour
        self.sku = sku  # the SKU's id, so a figure can be checked against Google's page

    def row(self) -> tuple[str, str, str, float, str]:
        return (self.generation, self.model, self.region, self.usd_per_chip_hour, self.sku)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SkuPrice) and self.row() == other.row()

    def __hash__(self) -> int:
        return hash(self.row())

    def __repr__(self) -> str:
        return f"SkuPrice{self.row()!r}"


class PriceBook:
    """Every TPU price one read of the catalog found, and when it was read. ``slices``: each
    slice name's generation and chips, as the catalog had them when the book was saved (empty
    for a book not from disk: a quote then asks the catalog)."""

    def __init__(
        self,
        read_at: float,
        prices: Iterable[SkuPrice] = (),
        slices: dict[str, tuple[str, int]] | None = None,
        rows: list[list[Any]] | None = None,
    ) -> None:
        """``rows``: the prices as saved (load's), made into SkuPrices only when asked for:
        a quote needs only their index."""
        self.read_at = read_at
        self._prices: tuple[SkuPrice, ...] | None = None if rows is not None else tuple(prices)
        self._rows: list[list[Any]] = (
            rows if rows is not None else [list(p.row()) for p in self._prices or ()]
        )
        self.slices = slices or {}
        self._index: dict[tuple[str, str, str], tuple[float, str]] | None = None

    @property
    def prices(self) -> tuple[SkuPrice, ...]:
        if self._prices is None:
            self._prices = tuple(SkuPrice(*row) for row in self._rows)
        return self._prices

    def per_chip_hour(self, generation: str, model: str, region: str) -> float | None:
        found = self.sku_price(generation, model, region)
        return None if found is None else found[0]

    def sku_price(self, generation: str, model: str, region: str) -> tuple[float, str] | None:
        """(USD per chip-hour, the SKU's id) for the place; None where the read had no SKU."""
        if self._index is None:
            # The first SKU for a place wins, as a reader scanning in Google's order takes it.
            index: dict[tuple[str, str, str], tuple[float, str]] = {}
            for g, m, r, usd, sku in self._rows:
                index.setdefault((g, m, r), (usd, sku))
            self._index = index
        return self._index.get((generation, model, region))

    def __eq__(self, other: object) -> bool:
        """The same read: its time and its prices (``slices`` is how it was saved)."""
        return isinstance(other, PriceBook) and (self.read_at, self.prices) == (
            other.read_at,
            other.prices,
        )

    __hash__ = None  # type: ignore[assignment]  # compared by value, as a dataclass was

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
    """The book saved at ``path``; None when there is none, or it is torn, not ours, or not
    sane (:func:`read` says why)."""
    return read(path)[0]


def read(path: Path) -> tuple[PriceBook | None, str]:
    """(the book saved at ``path``, "") or (None, why it was set aside: "" where there is no
    file, or one of an older tpuwizard's format, which the next read replaces unsaid)."""
    try:
        # No scan before the parse (a hit must stay fast): every row's shape is checked below.
        saved = untrusted.read_json(path, MAX_CACHE_BYTES, max_depth=None)
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as err:
        return None, untrusted.describe(err)
    if not isinstance(saved, dict) or saved.get("version") != _VERSION:
        return None, ""
    try:
        rows = saved["prices"]
        if not isinstance(rows, list):
            return None, _NOT_OURS
        for row in rows:  # five fields, the fourth a price: else not ours (or torn)
            if type(row) is not list or len(row) != 5:
                return None, _NOT_OURS
            generation, model, region, usd, sku = row
            if str is not type(generation) or str is not type(model) or str is not type(region):
                return None, _NOT_OURS
            if type(sku) is not str:
                return None, _NOT_OURS
            if type(usd) not in (int, float) or not 0 < usd < _INFINITY:  # NaN fails both
                return None, f"a price in it is not a positive number ({str(usd)[:24]})"
            if usd > MOST_USD_PER_CHIP_HOUR:
                return None, f"a price in it is no chip-hour's price (${usd:.3g})"
        slices = {}
        for name, (g, chips) in saved["slices"].items():
            if not isinstance(g, str) or not untrusted.usable_amount(chips):
                return None, _NOT_OURS
            slices[str(name)] = (g, int(chips))
        problem = untrusted.time_problem(saved["read_at"])
        if problem:
            return None, problem
        return PriceBook(float(saved["read_at"]), slices=slices, rows=rows), ""
    except (ValueError, KeyError, TypeError, AttributeError):
        return None, _NOT_OURS


_NOT_OURS = "it is not a price read tpuwizard wrote"
_INFINITY = float("inf")
# No TPU chip-hour costs a million dollars (v5p's list price is a few); a larger figure is a
# damaged file, and times a slice's chips and a run's hours it could reach infinity ("$inf/h").
MOST_USD_PER_CHIP_HOUR = 1e6


def save(path: Path, book: PriceBook) -> None:
    """Write ``book`` whole or not at all (a temporary file renamed over the old one), so a
    reader never meets half a file of ours."""
    path.parent.mkdir(parents=True, exist_ok=True)
    from tpuwizard.core.plan import catalog  # saved with the book, so a hit need not read it

    rows = [list(p.row()) for p in book.prices]  # as SkuPrices: strings and a float
    slices = {s.name: [s.generation.key, s.chips] for s in catalog.all_slices()}
    saved = {"version": _VERSION, "read_at": book.read_at, "prices": rows, "slices": slices}
    text = json.dumps(saved)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        temporary.write_text(text, "utf-8")
        os.replace(temporary, path)  # a FIFO or a link in its place is replaced, not written
    finally:
        temporary.unlink(missing_ok=True)  # a folder in its place: no temporary left beside it
