"""The CLI's prices from the sandbox's Billing Catalog (issue 33): `fit --json --refresh-prices`
reads it with Google's client (per region and route, each figure with its source, date and SKU)
and caches it; a launch then prices its first line from that cached read without waiting, with
the SKU in its JSON, and its summary names the catalog's read; `up` does too, and `status --json`
prices the node it keeps from the same read, with the same SKU."""

from __future__ import annotations

import json
import re
import subprocess
import time

from tests.conftest import clean_env, tpuwizard_cmd
from tests.integration.launch_helpers import env, launch, status
from tpuwizard.core.prices import cache

UP_FLAGS = ("--sandbox", "--json", "--accelerator", "v6e-1", "--route", "spot", "--no-preflight")
FIT_FLAGS = ("--generation", "v6e", "--single-host", "--json", "--sandbox", "--refresh-prices")


def test_fit_reads_the_catalog_then_a_launch_prices_from_that_read(tmp_path, home):
    fit = subprocess.run(
        tpuwizard_cmd("fit", "40GiB", *FIT_FLAGS),
        capture_output=True,
        text=True,
        timeout=120,
        env=clean_env(),
    )
    assert fit.returncode == 0, fit.stderr
    prices = json.loads(fit.stdout)["prices"]
    assert prices["read"] and prices["why_not_read"] is None
    spot = prices["slices"]["v6e-4"]["us-central1"]["spot"]
    assert spot["source"] == "catalog" and spot["usd_per_hour"] == 2.372  # 4 x $0.593
    assert spot["sku"] and spot["label"] == f"Cloud Billing Catalog, read {prices['read']}"
    assert prices["slices"]["v6e-4"]["europe-west4"]["vm"]["sku"] is None  # none there
    saved = cache.load(cache.cache_file(home / "cache", practice=True))
    assert saved is not None and saved.fresh()

    code, events, stderr = launch(
        tmp_path, "--accelerator", "v6e-1", "--route", "spot", "--no-preflight",
        where=("--zone", "us-central1-b"),
    )  # fmt: skip
    assert code == 0, stderr
    planned = next(e for e in events if e["event"] == "planned")
    up = next(e for e in events if e["event"] == "billing_started")
    for e in (planned, up):
        assert e["price_per_hour_usd"] == 0.593
        assert e["price_source"] == f"Cloud Billing Catalog, read {saved.date}"
        assert e["price_sku"] == spot["sku"]  # the same SKU fit read, for one chip of it
    assert f"Prices: the Cloud Billing Catalog's prices (read {saved.date})" in stderr


def test_up_and_status_price_a_kept_node_from_the_cached_read(tmp_path, home):
    from tests.integration.iterate_helpers import json_events
    from tpuwizard.core.prices.cache import PriceBook
    from tpuwizard.core.prices.skus import parse_skus
    from tpuwizard.sandbox.billing_catalog import skus
    from tpuwizard.sandbox.faults import Faults

    saved = PriceBook(time.time(), parse_skus(skus(Faults())))  # what a read of it gives
    cache.save(cache.cache_file(home / "cache", practice=True), saved)
    kept = subprocess.run(
        tpuwizard_cmd("up", *UP_FLAGS, "--zone", "us-central1-b"),
        cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env(),
    )  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    try:
        planned = next(e for e in json_events(kept.stdout) if e["event"] == "planned")
        assert planned["price_source"] == f"Cloud Billing Catalog, read {saved.date}"
        assert planned["zone"] == "us-central1-b"
        (left,) = status(tmp_path)
        price = left["price"]
        assert (price["usd_per_hour"], price["source"]) == (0.593, "catalog")
        assert price["sku"] == planned["price_sku"] and price["sku"]
        assert price["label"] == f"Cloud Billing Catalog, read {saved.date}"
    finally:
        down = subprocess.run(
            tpuwizard_cmd("down", "--sandbox", "--yes"),
            cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env(),
        )  # fmt: skip
        assert down.returncode == 0, down.stderr


def test_flex_start_s_own_sku_replaces_at_most_once_the_catalog_lists_it(tmp_path, home):
    # The sandbox lists Flex-start's SKU only as users report it (a fault key): with it, fit's
    # Flex-start figure for that region is the catalog's own, never "at most" on-demand.
    def flex_in_us_east5(faults: str) -> dict:
        fit = subprocess.run(
            tpuwizard_cmd("fit", "40GiB", *FIT_FLAGS),
            capture_output=True,
            text=True,
            timeout=120,
            env={**clean_env(), "TPUWIZARD_SANDBOX_FAULTS": faults},
        )
        assert fit.returncode == 0, fit.stderr
        return json.loads(fit.stdout)["prices"]["slices"]["v6e-4"]["us-east5"]["flex"]

    reported = flex_in_us_east5("flex_sku_reported=1")
    assert reported["source"] == "catalog" and reported["sku"]
    assert reported["usd_per_hour"] == 5.4 and reported["at_most"] is None  # 4 x $1.35
    unlisted = flex_in_us_east5("")
    assert unlisted["source"] == "offline" and unlisted["sku"] is None
    assert unlisted["usd_per_hour"] is None and unlisted["at_most"]  # the bound, labelled


# -- issue 48, item 8: a saved read that is no read of the catalog's ---------------------------
SPOT_BUDGET = (
    "--accelerator", "v5litepod-4", "--route", "spot", "--no-preflight", "--script", "job.py",
    "--checkpoints", "ckpt", "--budget", "1",
)  # fmt: skip


def poisoned_read(home, spot: float = float("nan"), other: float = -5.0) -> None:
    """A fresh-dated price cache whose v5e prices are NaN or below zero (json writes NaN)."""
    from tpuwizard.core.prices.skus import parse_skus
    from tpuwizard.sandbox.billing_catalog import skus
    from tpuwizard.sandbox.faults import Faults

    path = cache.cache_file(home / "cache", practice=True)
    cache.save(path, cache.PriceBook(time.time(), parse_skus(skus(Faults()))))
    saved = json.loads(path.read_text())
    for row in saved["prices"]:
        if row[0] == "v5e":
            row[3] = spot if row[1] == "spot" else other
    path.write_text(json.dumps(saved))


def test_a_poisoned_saved_read_is_read_again_before_the_budget_is_held(tmp_path, home):
    """It was shown as the catalog's ("$nan/h") and held --budget by NaN (the launch went ahead)
    or by "$-20.00/h" ("give --budget -4.00 or more"). Now it is set aside, the catalog read
    again before the budget is checked, and the launch held by the catalog's figure."""
    poisoned_read(home)
    (tmp_path / "job.py").write_text("print('trained')\n")
    code, events, stderr = launch(tmp_path, *SPOT_BUDGET)
    assert code == 0, stderr
    planned = next(e for e in events if e["event"] == "planned")
    assert planned["price_per_hour_usd"] == 1.192  # 4 chips x $0.298, the catalog's spot figure
    assert planned["price_source"].startswith("Cloud Billing Catalog, read ")
    # A price shown as "$nan/h" or "$-20.00/h" (not "maintenance", which holds the letters).
    assert not re.search(r"\bnan\b", stderr.lower()) and "$-" not in stderr
    book, why = cache.read(cache.cache_file(home / "cache", practice=True))
    assert why == "" and book is not None  # the read that replaced it


def test_a_poisoned_read_the_catalog_cannot_replace_leaves_the_offline_table_said(tmp_path, home):
    poisoned_read(home)
    (tmp_path / "job.py").write_text("print('trained')\n")
    code, events, stderr = launch(
        tmp_path, *SPOT_BUDGET, TPUWIZARD_SANDBOX_FAULTS="billing_unauthenticated=1"
    )
    assert code == 0, stderr
    planned = next(e for e in events if e["event"] == "planned")
    assert planned["price_per_hour_usd"] == 1.192 and "offline table" in planned["price_source"]
    said = " ".join(stderr.split())
    assert "prices-practice.json was set aside: it holds NaN" in said, said


def test_a_saved_price_of_1e308_is_never_shown_as_inf(tmp_path, home):
    """1e308 per chip-hour passed as a number and the plan said "about $inf/h" (issue 56, item
    7): now the read is set aside and the offline table's figure stands (the catalog refuses
    here; the create is refused too, so nothing is made)."""
    poisoned_read(home, spot=1e308, other=1e308)
    (tmp_path / "job.py").write_text("print('trained')\n")
    code, events, stderr = launch(
        tmp_path, "--accelerator", "v5litepod-4", "--no-preflight", "--script", "job.py",
        TPUWIZARD_SANDBOX_FAULTS="billing_unauthenticated=1;quota=1",
    )  # fmt: skip
    assert code == 3, stderr  # the quota refused the create
    planned = next(e for e in events if e["event"] == "planned")
    assert "offline table" in planned["price_source"] and 0 < planned["price_per_hour_usd"] < 100
    said = " ".join(stderr.split())
    assert "about $4.80/h (estimate; prices: offline table" in said, said
    assert "inf/h" not in said and "e+308" not in said, said


def test_status_with_a_fifo_for_its_price_cache_answers_and_says_why(tmp_path, home):
    import os

    (home / "cache").mkdir(parents=True, exist_ok=True)
    os.mkfifo(cache.cache_file(home / "cache", practice=True))
    proc = subprocess.run(
        tpuwizard_cmd("status", "--sandbox"),
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert "Prices: the offline table's figures, because the saved read" in said, said
    assert "was set aside: it is a named pipe (FIFO), not a regular file" in said
