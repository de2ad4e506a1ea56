"""Cost estimates: per-zone spot prices, the v2 pod rate, and Flex-start's bound (no figure)."""

import time

from tests.plans import launch_plan
from tpuwizard.commands.options.fit import named_slices
from tpuwizard.core.plan import catalog, cost


def test_spot_prices_differ_by_zone_where_google_prices_them_differently():
    cheap = cost.per_chip_hour(catalog.parse_accelerator("v5litepod-4"), "spot", "us-central1-a")
    dear = cost.per_chip_hour(catalog.parse_accelerator("v5litepod-4"), "spot", "us-south1-a")
    assert (cheap, dear) == (0.298, 0.654)
    assert (
        cost.per_chip_hour(catalog.parse_accelerator("v6e-4"), "spot", "us-central1-b") == 0.593
    )  # by region
    assert cost.hourly(catalog.parse_accelerator("v6e-4"), "spot", "europe-west4-a") == round(
        1.78 * 4, 4
    )


def test_on_demand_by_continent_and_region():
    assert cost.per_chip_hour(catalog.parse_accelerator("v5litepod-4"), "vm", "us-west4-a") == 1.20
    assert (
        cost.per_chip_hour(catalog.parse_accelerator("v5litepod-4"), "vm", "europe-west4-b") == 1.56
    )
    assert cost.per_chip_hour(catalog.parse_accelerator("v6e-8"), "vm", "asia-northeast1-b") == 3.24


def test_v2_pods_have_their_own_rate_and_small_v2_keeps_the_catalog_figure():
    assert cost.per_chip_hour(catalog.parse_accelerator("v2-32"), "vm") == 1.50
    assert cost.per_chip_hour(catalog.parse_accelerator("v2-8"), "vm") == 1.125


def test_flex_start_has_no_figure_and_on_demand_is_its_sourced_bound_never_spot():
    assert cost.hourly(catalog.parse_accelerator("v5litepod-4"), "flex", "us-central1-a") is None
    assert cost.estimate(catalog.parse_accelerator("v5litepod-4"), "flex", 3600) is None
    # Google bills Flex-start at a discount on on-demand (catalog.toml, [flex_start_price]).
    on_demand = cost.hourly(catalog.parse_accelerator("v5litepod-4"), "vm", "us-central1-a")
    assert on_demand is not None
    assert (
        cost.at_most_hourly(catalog.parse_accelerator("v5litepod-4"), "flex", "us-central1-a")
        == on_demand
    )
    assert cost.at_most(
        catalog.parse_accelerator("v5litepod-4"), "flex", 1800, "us-central1-a"
    ) == round(on_demand / 2, 4)
    assert cost.at_most_hourly(
        catalog.parse_accelerator("v5litepod-4"), "spot", "us-central1-a"
    ) == cost.hourly(catalog.parse_accelerator("v5litepod-4"), "spot", "us-central1-a")
    assert "Dynamic Workload Scheduler" in catalog.price_table("flex_start_price")["source"]
    assert "unknown" not in cost.label() and "at most on-demand's" in cost.label()
    assert "skypilot-catalog v9" in cost.label()


def test_the_fit_table_for_flex_start_shows_the_bound_not_spot_s_price():
    from tpuwizard.core.plan import fit

    (row,) = fit.plan(48, fit.select_slices(named_slices(["v5litepod-4"])), route="flex")
    assert row.price_per_hour_usd is None
    assert row.price_at_most_usd == catalog.parse_accelerator("v5litepod-4").price_per_hour("vm")
    assert "at most $4.80/h" in fit.verdict(48, [row])


def test_the_meter_and_the_summary_say_at_most_for_flex_start_never_unknown():
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.core.launch.events.summary import RunSummary
    from tpuwizard.core.launch.records.billing_state import BillingState
    from tpuwizard.tui.widgets.status_bar import meter_text
    from tpuwizard.words.summary_text import summary_lines

    billing = BillingState()
    billing.apply(ev.ResourceExists("f", "queued", "us-west4-a", "v5litepod-4", "flex", "r"))
    billing.apply(ev.BillingStarted("f", time.time() - 3600, None, "us-west4-a", 4.8))
    meter = meter_text(billing)
    assert "unknown" not in meter and "<=$4.80" in meter
    summary = RunSummary()
    summary.apply(ev.TeardownVerified("f", "queued", 3600, None, "us-west4-a", 0, 4.8))
    summary.apply(ev.Finished(True, 0, "runs/r", None, [], 4.8))
    text = "\n".join(summary_lines(summary))
    assert "unknown" not in text and "Cost: at most $4.80 (estimate)" in text
    assert cost.FLEX_PRICE_NOTE in text


def test_without_a_zone_the_generation_figure_stands():
    assert cost.per_chip_hour(catalog.parse_accelerator("v5litepod-4"), "spot") == 0.245


def test_a_zone_price_says_when_it_is_only_the_list_price_or_why_there_is_none():
    from tpuwizard.core.plan.cost import FLEX_PRICE_NOTE, LIST_PRICE_NOTE, ZonePrice, zone_price

    # A zone or region with its own figure: no note.
    assert zone_price(
        catalog.parse_accelerator("v5litepod-4"), "spot", "us-central1-a"
    ) == ZonePrice(1.192, "")
    assert zone_price(
        catalog.parse_accelerator("v5litepod-4"), "vm", "europe-west4-b"
    ) == ZonePrice(6.24, "")
    # No row for the region: the generation's list price, said to be one.
    assert zone_price(catalog.parse_accelerator("v5litepod-4"), "spot", "us-west4-a") == ZonePrice(
        0.98, LIST_PRICE_NOTE
    )
    assert (
        zone_price(catalog.parse_accelerator("v4-8"), "vm", "us-central2-b").note == LIST_PRICE_NOTE
    )
    # None, always with the reason.
    assert zone_price(catalog.parse_accelerator("v5litepod-4"), "flex", "us-west4-a") == ZonePrice(
        None, FLEX_PRICE_NOTE, 4.8
    )
    missing = zone_price(catalog.parse_accelerator("tpu7x-8"), "vm", "us-central1-c")
    assert missing.hourly is None and "tpu7x" in missing.note


def test_route_zones_put_the_route_s_own_first_and_say_why_the_rest_are_not():
    from tpuwizard.core.cloud.zones import route_zones

    offering = ["europe-west4-b", "us-central1-a", "us-south1-a", "us-west4-a"]
    flex = route_zones(catalog.parse_accelerator("v5litepod-4"), "flex", offering)
    assert [r.zone for r in flex] == [
        "us-central1-a",
        "us-west4-a",
        "europe-west4-b",
        "us-south1-a",
    ]
    assert [r.unusable for r in flex[:2]] == ["", ""]
    assert flex[2].unusable == "no Flex-start here (only us-west4-a, us-central1-a)"
    # v5e's Flex-start serving zone takes single-host sizes only: not a v5litepod-16.
    big = route_zones(catalog.parse_accelerator("v5litepod-16"), "flex", offering)
    assert [r.zone for r in big if not r.unusable] == ["us-west4-a"]
    assert all(
        not r.unusable
        for r in route_zones(catalog.parse_accelerator("v5litepod-4"), "spot", offering)
    )


def test_a_flex_start_fan_out_s_worst_case_is_at_most_on_demand_not_unknown(tmp_path):
    from tpuwizard.core.launch.plan.zone_rules import worst_case_hourly
    from tpuwizard.core.plan import cost

    zones = ("us-east5-a", "us-east5-b")
    base = {"accelerator": "v6e-4", "zone": zones[0], "project": "p", "run_id": "r"}
    flex = launch_plan(**base, run_dir=tmp_path, route="flex", zones=zones, fan_out=True)  # type: ignore[arg-type]
    on_demand = sum(cost.hourly(catalog.parse_accelerator("v6e-4"), "vm", z) or 0 for z in zones)
    assert worst_case_hourly(flex.where) == on_demand > 0


def test_the_flex_start_caveat_is_said_only_where_a_flex_start_figure_is_shown():
    from tpuwizard.core.plan import cost

    assert "Flex-start" not in cost.label(flex=False)  # status with on-demand nodes only
    assert "at most on-demand's" in cost.label(flex=True)
    assert cost.label(flex=False).startswith("estimate from approximate list prices")
