"""Prices from the Cloud Billing Catalog (issue 33): SKUs read into per-chip-hour prices by
generation, model and region; the disk cache (a day, a torn file ignored); the quote that falls
back to the offline table, saying why; and the session's reader, which calls only when it must."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tpuwizard.core.plan import catalog
from tpuwizard.core.prices import cache
from tpuwizard.core.prices.cache import FLEX, ON_DEMAND, SPOT, PriceBook, SkuPrice
from tpuwizard.core.prices.quote import CATALOG, OFFLINE, quote
from tpuwizard.core.prices.skus import parse_skus


def sku(description, regions, usd, usage="OnDemand", unit="h"):
    units = int(usd)
    return {
        "skuId": "AAAA-BBBB-CCCC",
        "description": description,
        "category": {"resourceFamily": "Compute", "usageType": usage},
        "serviceRegions": regions,
        "pricingInfo": [
            {
                "pricingExpression": {
                    "usageUnit": unit,
                    "tieredRates": [
                        {
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": round((usd - units) * 1e9),
                            }
                        }
                    ],
                }
            }
        ],
    }


def test_tpu_skus_are_read_by_generation_model_and_region():
    found = parse_skus(
        [
            sku("TpuV6e", ["us-east5", "us-central1"], 2.7),
            # A spot SKU says so in its description, though its usageType may be OnDemand.
            sku("TpuV6e attached to Spot Preemptible VMs", ["us-east5"], 1.4),
            sku("DWS Defined Duration V6e", ["us-east5"], 1.35),
            sku("TpuV5p", ["us-east5"], 4.2, usage="Commit1Yr"),  # a commitment: not hourly
            sku("Commitment v1: TpuV5e in Americas", ["us-west4"], 0.8),
            sku("N2 Instance Core running in Americas", ["us-east5"], 0.03),
            sku("TpuV5e", ["us-west4"], 1.2, unit="GiBy.mo"),  # not per hour
        ]
    )
    assert {(p.generation, p.model, p.region, p.usd_per_chip_hour) for p in found} == {
        ("v6e", ON_DEMAND, "us-east5", 2.7),
        ("v6e", ON_DEMAND, "us-central1", 2.7),
        ("v6e", SPOT, "us-east5", 1.4),
        ("v6e", FLEX, "us-east5", 1.35),
    }


def book(*prices: SkuPrice, at: float | None = None) -> PriceBook:
    return PriceBook(time.time() if at is None else at, prices)


def test_a_catalog_figure_replaces_the_offline_one_and_says_its_date():
    read = book(SkuPrice("v6e", SPOT, "us-east5", 1.40, "S"))
    q = quote(read, "", "v6e-4", "spot", "us-east5-a")
    assert q.source == CATALOG and q.hourly == 5.6 and q.note == ""
    assert q.label.startswith("Cloud Billing Catalog, read ")


def test_flex_start_s_sku_replaces_at_most_and_without_it_the_bound_stays_labelled():
    read = book(SkuPrice("v6e", FLEX, "us-east5", 1.35, "F"))
    q = quote(read, "", "v6e-4", "flex", "us-east5-a")
    assert q.source == CATALOG and q.hourly == 5.4 and q.at_most is None
    elsewhere = quote(read, "", "v6e-4", "flex", "europe-west4-a")
    assert elsewhere.source == OFFLINE and elsewhere.hourly is None and elsewhere.at_most
    assert "no Flex-start SKU for v6e" in elsewhere.note and "offline table" in elsewhere.label


@pytest.mark.parametrize(
    ("accelerator", "zone", "why"),
    [
        ("v6e-4", "europe-west4-a", "no spot SKU for v6e in this region"),
        ("tpu7x-8", "us-central1-c", "no report names TPU7x's Billing Catalog SKU"),
        ("v4-8", "us-central2-b", "reads Google's price list for v5e, v5p, v6e only, not for v4"),
    ],
)
def test_where_the_catalog_has_no_sku_the_offline_figure_says_why(accelerator, zone, why):
    q = quote(
        book(SkuPrice("v6e", SPOT, "us-east5", 1.4, "S")),
        "",
        accelerator,
        "spot",
        zone,
    )
    assert q.source == OFFLINE and why in q.note


def test_no_book_at_all_says_why_beside_the_offline_figure():
    q = quote(
        None,
        "the Cloud Billing API is not enabled",
        "v6e-4",
        "vm",
        "us-east5-a",
    )
    assert q.source == OFFLINE and q.hourly == 10.8
    assert q.note.startswith("the Billing Catalog could not be read: the Cloud Billing API")


def test_the_cache_keeps_the_date_a_day_and_ignores_a_torn_file(tmp_path):
    path = cache.cache_file(tmp_path, practice=True)
    saved = book(SkuPrice("v6e", SPOT, "us-east5", 1.4, "S"), at=1000.0)
    cache.save(path, saved)
    assert cache.load(path) == saved
    assert saved.fresh(now=1000.0 + 23 * 3600) and not saved.fresh(now=1000.0 + 25 * 3600)
    path.write_text(path.read_text()[:20])  # torn mid-write by another process
    assert cache.load(path) is None
    assert cache.cache_file(tmp_path, practice=False) != path  # Google's never the sandbox's


class FakeSession:
    practice = True


@pytest.fixture
def reads(monkeypatch, tmp_path):
    """The session's reader with the catalog read replaced: counts the reads, or fails."""
    from tpuwizard.core import paths
    from tpuwizard.core.prices import reader
    from tpuwizard.session import prices

    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(prices, "_where", lambda session: ("http://127.0.0.1:1", None))
    state: dict[str, Any] = {"count": 0, "fail": None}

    def read(endpoint, credentials, timeout=30.0):
        state["count"] += 1
        if state["fail"]:
            raise reader.PriceReadError(state["fail"])
        return book(SkuPrice("v6e", SPOT, "us-east5", 1.4, "S"))

    monkeypatch.setattr(reader, "read_catalog", read)
    return state


def test_the_session_reads_once_a_day_or_when_asked(reads):
    from tpuwizard.session.prices import price_book

    first, why = price_book(FakeSession())  # type: ignore[arg-type]
    assert first is not None and why == "" and reads["count"] == 1
    again, _ = price_book(FakeSession())  # type: ignore[arg-type]
    assert again == first and reads["count"] == 1  # fresh on disk: no call
    price_book(FakeSession(), refresh=True)  # type: ignore[arg-type]
    assert reads["count"] == 2


def test_a_failed_read_keeps_the_earlier_one_labelled_or_says_why(reads, tmp_path):
    from tpuwizard.session.prices import price_book

    reads["fail"] = "the Cloud Billing API is not enabled"
    none, why = price_book(FakeSession())  # type: ignore[arg-type]
    assert none is None and why == "the Cloud Billing API is not enabled"
    reads["fail"] = None
    price_book(FakeSession())  # type: ignore[arg-type]
    reads["fail"] = "no credentials the Cloud Billing API accepts"
    kept, why = price_book(FakeSession(), refresh=True)  # type: ignore[arg-type]
    assert kept is not None and "not re-read (no credentials" in why and kept.date in why


def test_zones_shows_the_catalog_s_price_with_its_date_and_the_offline_one_marked(monkeypatch):
    import json

    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.commands import zones as zones_command
    from tpuwizard.core.cloud.zones import ZoneSurvey
    from tpuwizard.session import prices
    from tpuwizard.session.decision import ZoneAnswer
    from tpuwizard.session.session import Session

    s = Session(practice=True, project="practice-project")
    survey = ZoneSurvey("live", {"us-east5-a": ["v6e-4"], "europe-west4-a": ["v6e-4"]})
    monkeypatch.setattr(s, "zone_survey", lambda **_: ZoneAnswer(survey, practice=True))
    monkeypatch.setattr(zones_command, "open_session", lambda project, sandbox: s)
    read = book(SkuPrice("v6e", SPOT, "us-east5", 1.40, "S"))
    asked: list[bool] = []

    def price_book(session, refresh):
        asked.append(refresh)
        return read, ""

    monkeypatch.setattr(prices, "price_book", price_book)
    args = ["zones", "--sandbox", "--accelerator", "v6e-4", "--route", "spot"]
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert doc["price_per_hour_usd"]["us-east5-a"] == 5.6  # the catalog's, not the table's
    assert doc["price_sources"]["us-east5-a"]["source"] == "catalog"
    assert doc["price_sources"]["europe-west4-a"]["source"] == "offline"
    text = CliRunner().invoke(main, [*args, "--refresh-prices"]).output
    assert f"Prices: the Cloud Billing Catalog, read {read.date}" in text
    assert asked == [False, True]


def test_fit_json_gives_each_slice_per_region_route_prices_from_the_cached_read(
    monkeypatch, tmp_path
):
    import json

    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.core import paths

    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path)
    args = ["fit", "48", "--json", "--slices", "v6e-4", "--sandbox"]
    unread = json.loads(CliRunner().invoke(main, args).stdout)["prices"]
    assert unread["read"] is None and "--refresh-prices" in unread["why_not_read"]
    assert unread["slices"] == {}  # each slice's price_per_hour_usd is the offline table's
    saved = book(SkuPrice("v6e", FLEX, "us-east5", 1.35, "F"))
    cache.save(cache.cache_file(tmp_path, practice=True), saved)
    prices = json.loads(CliRunner().invoke(main, args).stdout)["prices"]
    flex = prices["slices"]["v6e-4"]["us-east5"]["flex"]
    assert prices["read"] == saved.date
    assert flex["usd_per_hour"] == 5.4 and flex["source"] == "catalog" and flex["at_most"] is None
    on_demand = prices["slices"]["v6e-4"]["europe-west4"]["vm"]
    assert on_demand["source"] == "offline" and "no on-demand SKU" in on_demand["note"]
    assert flex["sku"] == "F" and on_demand["sku"] is None
    # The slice's own figure is the read's too (its cheapest region's), not "at most" on-demand.
    fitted = json.loads(CliRunner().invoke(main, [*args, "--route", "flex"]).stdout)
    (v6e,) = fitted["slices"]
    assert (v6e["price_per_hour_usd"], v6e["price_at_most_usd"]) == (5.4, 5.4)
    assert saved.date in fitted["prices"]["slices_priced_from"]


def test_status_costs_use_the_cached_catalog_read_flex_start_s_at_most_replaced(
    monkeypatch, tmp_path
):
    from tpuwizard.commands.catalog_prices import NOT_READ, price_entry, use_cached_prices
    from tpuwizard.core import paths
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.core.launch.records.ledger import Resource
    from tpuwizard.core.plan import cost

    monkeypatch.setattr(paths, "cache_dir", lambda: tmp_path)

    def running(route, zone):
        r = Resource(
            "node", "p", zone, f"tpu-{route}", "v6e-4", "run1", route, None, "o", "compute"
        )
        return Billable(r, "RUNNING", 1800.0, None, "ledger", bills=True)

    flex, elsewhere = running("flex", "us-east5-a"), running("flex", "europe-west4-a")
    unread = use_cached_prices(FakeSession())  # type: ignore[arg-type]
    assert unread == (None, NOT_READ) and cost.catalog_source() is None  # the offline table's
    offline = price_entry(flex, unread)
    assert offline["source"] == OFFLINE and offline["sku"] is None and offline["at_most"]
    saved = book(SkuPrice("v6e", FLEX, "us-east5", 1.35, "F"))
    cache.save(cache.cache_file(tmp_path, practice=True), saved)
    found = use_cached_prices(FakeSession())  # type: ignore[arg-type]
    assert found == (saved, "")
    # 4 chips x $1.35 x half an hour, no longer "at most"; no SKU elsewhere: at most, as before.
    assert cost.estimate(catalog.parse_accelerator("v6e-4"), "flex", 1800.0, "us-east5-a") == 2.7
    assert flex.cost_at_most_usd == 2.7
    assert (
        cost.estimate(catalog.parse_accelerator("v6e-4"), "flex", 1800.0, "europe-west4-a") is None
    )
    entry = price_entry(flex, found)
    assert (entry["usd_per_hour"], entry["source"], entry["sku"]) == (5.4, CATALOG, "F")
    assert saved.date in str(entry["label"]) and saved.date in cost.label()
    assert price_entry(elsewhere, found)["source"] == OFFLINE


@pytest.mark.parametrize("usd", [1e308, float("nan")])
def test_a_catalog_figure_that_is_no_price_times_the_chips_gives_the_offline_figure(usd):
    """1e308 per chip-hour times 4 chips is infinity: never "$inf/h" (issue 56, item 7)."""
    q = quote(book(SkuPrice("v6e", SPOT, "us-east5", usd, "S")), "", "v6e-4", "spot", "us-east5-a")
    offline = quote(None, "", "v6e-4", "spot", "us-east5-a")
    assert q.source == OFFLINE and q.hourly == offline.hourly and q.hourly is not None
    assert q.note.startswith("the Billing Catalog's figure for v6e-4 is no price ($")
