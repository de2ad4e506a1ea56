"""Cost estimates: per-zone spot prices, the v2 pod rate, and Flex-start's unknown price."""

from tpuwizard.core.plan import cost


def test_spot_prices_differ_by_zone_where_google_prices_them_differently():
    cheap = cost.per_chip_hour("v5litepod-4", "spot", "us-central1-a")
    dear = cost.per_chip_hour("v5litepod-4", "spot", "us-south1-a")
    assert (cheap, dear) == (0.298, 0.654)
    assert cost.per_chip_hour("v6e-4", "spot", "us-central1-b") == 0.593  # by region
    assert cost.hourly("v6e-4", "spot", "europe-west4-a") == round(1.78 * 4, 4)


def test_on_demand_by_continent_and_region():
    assert cost.per_chip_hour("v5litepod-4", "vm", "us-west4-a") == 1.20
    assert cost.per_chip_hour("v5litepod-4", "vm", "europe-west4-b") == 1.56
    assert cost.per_chip_hour("v6e-8", "vm", "asia-northeast1-b") == 3.24


def test_v2_pods_have_their_own_rate_and_small_v2_keeps_the_catalog_figure():
    assert cost.per_chip_hour("v2-32", "vm") == 1.50
    assert cost.per_chip_hour("v2-8", "vm") == 1.125


def test_flex_start_price_is_unknown_not_the_spot_price():
    assert cost.hourly("v5litepod-4", "flex", "us-central1-a") is None
    assert cost.estimate("v5litepod-4", "flex", 3600) is None
    assert "Flex-start's price is unknown" in cost.label()
    assert "skypilot-catalog v9" in cost.label()


def test_without_a_zone_the_generation_figure_stands():
    assert cost.per_chip_hour("v5litepod-4", "spot") == 0.245
