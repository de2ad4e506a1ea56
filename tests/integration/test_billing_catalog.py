"""The sandbox's Cloud Billing Catalog read with Google's client (issue 33): the offline table's
sourced figures in the API's shape, paged; a missing SKU, a 401 and the API off, each said."""

from __future__ import annotations

import pytest
import requests
from google.auth.credentials import AnonymousCredentials

from tpuwizard.core.plan import catalog, cost
from tpuwizard.core.prices.cache import ON_DEMAND, SPOT
from tpuwizard.core.prices.quote import CATALOG, OFFLINE, quote
from tpuwizard.core.prices.reader import PriceReadError, read_catalog
from tpuwizard.core.prices.skus import COMPUTE_SERVICE


def read(sandbox, faults=None):
    server, _ = sandbox(faults, delay=0.01)
    return read_catalog(server.endpoint, AnonymousCredentials())


def test_the_catalog_serves_the_offline_table_s_sourced_figures(sandbox):
    book = read(sandbox)
    assert book.per_chip_hour("v6e", SPOT, "europe-west4") == 1.78  # zone_prices, sourced
    assert book.per_chip_hour("v6e", ON_DEMAND, "us-east5") == 2.70
    for p in book.prices:  # every figure is the table's own for a zone of that region
        accelerator = {"v5e": "v5litepod-1", "v5p": "v5p-8", "v6e": "v6e-1"}[p.generation]
        route = "spot" if p.model == SPOT else "vm"
        chips = catalog.parse_accelerator(accelerator).chips
        g = catalog.generations()[p.generation]
        zones = [z for z in (*g.zones, *g.ai_zones) if z.rsplit("-", 1)[0] == p.region]
        sourced = [cost.zone_price(catalog.parse_accelerator(accelerator), route, z) for z in zones]
        assert any(
            o.note == "" and o.hourly == pytest.approx(p.usd_per_chip_hour * chips) for o in sourced
        ), p
    # A region the table has only the list price for gets no SKU: the quote says so.
    assert book.per_chip_hour("v6e", ON_DEMAND, "europe-west4") is None
    q = quote(book, "", "v6e-4", "vm", "europe-west4-a")
    assert q.source == OFFLINE and "no on-demand SKU" in q.note
    assert quote(book, "", "v6e-4", "vm", "us-east5-a").source == CATALOG


def test_the_skus_come_in_google_s_shape_and_pages(sandbox):
    server, _ = sandbox(delay=0.01)
    url = f"{server.endpoint}/v1/services/{COMPUTE_SERVICE}/skus"
    first = requests.get(url, params={"pageSize": 5}, timeout=10).json()
    assert len(first["skus"]) == 5 and first["nextPageToken"]
    one = first["skus"][0]
    assert one["name"] == f"services/{COMPUTE_SERVICE}/skus/{one['skuId']}"
    assert (
        one["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]["currencyCode"]
        == "USD"
    )
    rest = requests.get(
        url, params={"pageSize": 5, "pageToken": first["nextPageToken"]}, timeout=10
    )
    assert rest.json()["skus"][0] != one


def test_a_missing_sku_is_missing_and_refusals_say_what_is_wanting(sandbox):
    book = read(sandbox, "sku_missing=v6e:spot@europe-west4")
    assert book.per_chip_hour("v6e", SPOT, "europe-west4") is None
    assert book.per_chip_hour("v6e", SPOT, "us-central1") == 0.593
    with pytest.raises(PriceReadError, match="no credentials the Cloud Billing API accepts"):
        read(sandbox, "billing_unauthenticated=1")
    with pytest.raises(PriceReadError, match=r"Cloud Billing API is not enabled \(gcloud services"):
        read(sandbox, "disabled_services=cloudbilling.googleapis.com")


def test_every_field_the_sandbox_sends_is_one_of_google_s_sku_message():
    from google.cloud import billing_v1

    from tpuwizard.sandbox import billing_catalog
    from tpuwizard.sandbox.faults import Faults

    def unknown(descriptor, value, where):
        fields = {f.json_name: f for f in descriptor.fields}
        found = [f"{where}.{k}" for k in value if k not in fields]
        for key, item in value.items():
            field = fields.get(key)
            if field is None or field.message_type is None:
                continue
            for one in item if isinstance(item, list) else [item]:
                if isinstance(one, dict):  # a Timestamp is a string in JSON
                    found += unknown(field.message_type, one, f"{where}.{key}")
        return found

    skus = billing_catalog.skus(Faults())
    sku = billing_v1.Sku.pb().DESCRIPTOR
    assert skus and all(unknown(sku, s, "Sku") == [] for s in skus)
