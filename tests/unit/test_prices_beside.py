"""A launch's prices beside it (issue 33): the cached Billing Catalog read or the offline table's
at once, labelled, so the first line never waits for a cold read; the catalog's figure, with its
SKU, for every figure after the read lands; nothing installed once the command is done. And the
words around them: an event says whose price it shows, Review says "in this region" once."""

from __future__ import annotations

import threading
import time

import pytest

from tests.waiting import wait_until
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.prices.cache import ON_DEMAND, SPOT, PriceBook, SkuPrice
from tpuwizard.core.prices.live import READING, BookPrices
from tpuwizard.core.prices.quote import offline_label, quote
from tpuwizard.session import prices
from tpuwizard.words.event_text import describe

BOOK = PriceBook(
    time.time(),
    (
        SkuPrice("v6e", SPOT, "us-east5", 1.40, "SPOT-EAST5"),
        SkuPrice("v6e", ON_DEMAND, "us-east5", 2.70, "OD-EAST5"),
    ),
)
WHERE = (catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a")


class SlowRead:
    """The catalog's read, held until :meth:`land` (a cold read at Google's pace)."""

    def __init__(self, book: PriceBook) -> None:
        self.book, self.calls = book, 0
        self._go = threading.Event()

    def __call__(self, session: object, refresh: bool = False) -> BookPrices:
        self.calls += 1
        assert self._go.wait(30), "the test never let the read land"
        return BookPrices(self.book)

    def land(self) -> None:
        self._go.set()


@pytest.fixture
def read(monkeypatch) -> SlowRead:
    slow = SlowRead(BOOK)
    monkeypatch.setattr(prices, "catalog_prices", slow)
    return slow


def test_a_cold_read_does_not_hold_the_first_figure_and_prices_the_rest(monkeypatch, read):
    monkeypatch.setattr(prices, "cached_book", lambda session: None)
    beside = prices.PricesBeside(object())  # type: ignore[arg-type]
    beside.start()  # returns while the read is still held
    assert cost.price_origin(*WHERE) == (offline_label(), "")
    assert READING in (cost.catalog_source() or "")
    read.land()
    wait_until(lambda: cost.price_origin(*WHERE)[1] == "SPOT-EAST5", 30, "the read to land")
    assert cost.hourly(*WHERE) == pytest.approx(5.6)
    assert cost.price_origin(*WHERE)[0].startswith("Cloud Billing Catalog, read ")
    beside.finish()


def test_a_fresh_cached_read_prices_at_once_without_a_call(monkeypatch, read):
    monkeypatch.setattr(prices, "cached_book", lambda session: BOOK)
    beside = prices.PricesBeside(object())  # type: ignore[arg-type]
    beside.start()
    assert cost.price_origin(*WHERE) == (f"Cloud Billing Catalog, read {BOOK.date}", "SPOT-EAST5")
    beside.finish()
    assert read.calls == 0


def test_an_old_cached_read_stands_labelled_until_the_new_one_lands(monkeypatch, read):
    old = PriceBook(time.time() - 3 * 24 * 3600, (SkuPrice("v6e", SPOT, "us-east5", 1.2, "OLD"),))
    monkeypatch.setattr(prices, "cached_book", lambda session: old)
    beside = prices.PricesBeside(object())  # type: ignore[arg-type]
    beside.start()
    assert cost.price_origin(*WHERE) == (f"Cloud Billing Catalog, read {old.date}", "OLD")
    assert f"the read of {old.date} stands" in (cost.catalog_source() or "")
    read.land()
    wait_until(lambda: cost.price_origin(*WHERE)[1] == "SPOT-EAST5", 30, "the new read")
    beside.finish()


def test_a_read_landing_after_the_command_is_done_prices_nothing(monkeypatch, read):
    monkeypatch.setattr(prices, "cached_book", lambda session: None)
    beside = prices.PricesBeside(object())  # type: ignore[arg-type]
    beside.start()
    beside.finish()
    read.land()
    wait_until(lambda: read.calls == 1, 30, "the read to run")
    assert beside._thread is not None
    beside._thread.join(60)
    assert cost.price_origin(*WHERE) == (offline_label(), "")


def test_a_launch_s_lines_say_whose_price_they_show():
    planned = ev.Planned(
        "r", "n", "v6e-4", "us-east5-a", "spot", "p", 4, 1, 5.6, 60, True, "/runs/r",
        price_source="Cloud Billing Catalog, read 2026-12-02 07:00 UTC", price_sku="SPOT-EAST5",
    )  # fmt: skip
    assert (
        "$5.60/h (estimate; prices: Cloud Billing Catalog, read 2026-12-02 07:00 UTC)"
        in (describe(planned)[0])
    )
    up = ev.BillingStarted("n", 0.0, 5.6, "us-east5-a", 5.6, offline_label(), "")
    assert f"(estimate; prices: {offline_label()})" in describe(up)[0]


def test_a_quote_s_json_carries_its_sku():
    assert quote(BOOK, "", "v6e-4", *WHERE[1:]).as_json()["sku"] == "SPOT-EAST5"
    assert quote(None, "not read", "v6e-4", *WHERE[1:]).as_json()["sku"] is None


def test_a_missing_sku_beside_the_list_price_says_in_this_region_once():
    from tpuwizard.core.cloud.backends import Backend
    from tpuwizard.tui.screens.review import price_line
    from tpuwizard.tui.state import WizardState

    # The catalog has spot for us-east5 only: europe-west4's is the offline list price.
    note = quote(BOOK, "", "v6e-4", "vm", "europe-west4-a").note
    assert "no on-demand SKU for v6e in this region" in note
    cost.use_catalog(BookPrices(BOOK))
    state = WizardState(
        accelerator="v6e-4", zone="europe-west4-a", backend=Backend.COMPUTE, project="p"
    )
    line = price_line(state)
    assert line.count("in this region") == 1, line


def test_a_summary_without_a_price_says_why_there_is_none():
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.words.summary_text import summary_lines

    cost.use_catalog(BookPrices(BOOK))
    summary = RunSummary()
    summary.apply(
        ev.Planned("r", "n", "tpu7x-8", "us-central1-c", "vm", "p", 4, 1, None, 60, False, "/r")
    )
    summary.gone, summary.billed_s = ["n"], 18.0
    lines = summary_lines(summary)
    assert "  Cost: a price the catalog does not have (estimate) for 18 s of billing." in lines
    assert any(
        line.startswith("    (No price: no report names TPU7x's Billing Catalog SKU")
        for line in lines
    ), lines
