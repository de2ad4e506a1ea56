"""The session's prices (issue 33): once a Billing Catalog read is installed, every figure that
core/plan/cost.py gives (the meter, Review, Capacity, the summary, plain mode) is the catalog's
where it has the SKU, Flex-start's "at most" replaced by its own price, each labelled with its
source; the offline table's stands, marked, while the read runs, and says why after a failure."""

from __future__ import annotations

import time

import pytest

from tpuwizard.core.launch.records.billing_state import Billed
from tpuwizard.core.plan import catalog, cost, fit
from tpuwizard.core.prices.cache import FLEX, ON_DEMAND, SPOT, PriceBook, SkuPrice
from tpuwizard.core.prices.live import READING, BookPrices

# Per chip-hour, as users read them in the catalog (issue 33): not the offline table's figures.
BOOK = PriceBook(
    time.time(),
    (
        SkuPrice("v6e", SPOT, "us-east5", 1.40, "SPOT-EAST5"),
        SkuPrice("v6e", SPOT, "europe-west4", 1.78, "SPOT-EU"),
        SkuPrice("v6e", SPOT, "us-east1", 0.65, "SPOT-EAST1"),
        SkuPrice("v6e", FLEX, "us-east5", 1.35, "FLEX-EAST5"),
        SkuPrice("v6e", ON_DEMAND, "us-east5", 2.70, "OD-EAST5"),
    ),
)


def test_installed_catalog_prices_every_figure_with_its_source():
    assert (
        cost.hourly(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a") != 5.6
    )  # the offline table's
    cost.use_catalog(BookPrices(BOOK))
    assert cost.hourly(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a") == pytest.approx(
        5.6
    )
    price = cost.zone_price(catalog.parse_accelerator("v6e-4"), "spot", "europe-west4-a")
    assert price.hourly == pytest.approx(7.12)
    assert price.label.startswith("Cloud Billing Catalog, read ")
    assert price.note == ""
    assert (cost.catalog_source() or "").startswith("the Cloud Billing Catalog's prices (read ")
    assert "Cloud Billing Catalog" in cost.label()


def test_flex_start_at_most_is_replaced_where_the_catalog_has_its_sku():
    offline = cost.zone_price(catalog.parse_accelerator("v6e-4"), "flex", "us-east5-a")
    assert offline.hourly is None and offline.at_most is not None
    cost.use_catalog(BookPrices(BOOK))
    price = cost.zone_price(catalog.parse_accelerator("v6e-4"), "flex", "us-east5-a")
    assert (price.hourly, price.at_most) == (pytest.approx(5.4), None)
    assert cost.at_most_hourly(
        catalog.parse_accelerator("v6e-4"), "flex", "us-east5-a"
    ) == pytest.approx(5.4)
    assert cost.estimate(
        catalog.parse_accelerator("v6e-4"), "flex", 3600, "us-east5-a"
    ) == pytest.approx(5.4)
    # Where the catalog has no Flex-start SKU, the offline bound stays, with why.
    other = cost.zone_price(catalog.parse_accelerator("v6e-4"), "flex", "asia-northeast1-b")
    assert other.hourly is None and other.at_most is not None
    assert "no Flex-start SKU for v6e" in other.note


def test_the_meter_bills_at_the_catalog_price():
    now = time.time()
    node = Billed("n", "node", "us-east5-a", "v6e-4", "flex", now - 7200, now - 3600)
    assert node.cost_usd(now) is None  # offline: Flex-start has no figure, only a bound
    cost.use_catalog(BookPrices(BOOK))
    assert node.cost_usd(now) == pytest.approx(5.4)
    assert node.cost_at_most_usd(now) == pytest.approx(5.4)


def test_capacity_without_a_zone_takes_the_cheapest_region_the_catalog_prices():
    cost.use_catalog(BookPrices(BOOK))
    price = cost.zone_price(catalog.parse_accelerator("v6e-4"), "spot", None)
    assert price.hourly == pytest.approx(4 * 0.65)
    assert price.note == "in us-east1, its cheapest documented region"
    (row,) = fit.plan(48, [catalog.parse_accelerator("v6e-4")], route="spot")
    assert row.price_per_hour_usd == pytest.approx(2.6)


def test_while_the_read_runs_the_offline_figure_stands_marked():
    offline = cost.zone_price(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a")
    cost.use_catalog(BookPrices(None, reading=True))
    price = cost.zone_price(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a")
    assert price.hourly == offline.hourly
    assert price.note.startswith(READING)
    assert READING in (cost.catalog_source() or "")


def test_a_failed_read_says_why_beside_the_offline_figure():
    cost.use_catalog(BookPrices(None, "the Cloud Billing API is not enabled"))
    price = cost.zone_price(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a")
    assert (
        price.hourly
        == cost.offline_zone_price(catalog.parse_accelerator("v6e-4"), "spot", "us-east5-a").hourly
    )
    assert "could not be read: the Cloud Billing API is not enabled" in price.note
    assert "could not be read" in (cost.catalog_source() or "")


def test_without_a_zone_and_without_a_sku_the_list_price_stands_with_why():
    cost.use_catalog(BookPrices(BOOK))
    price = cost.zone_price(catalog.parse_accelerator("v5litepod-4"), "spot", None)
    assert (
        price.hourly
        == cost.offline_zone_price(catalog.parse_accelerator("v5litepod-4"), "spot", None).hourly
    )
    assert "no spot SKU for v5e" in price.note
