"""Compute Engine's labelled survey in aggregated lists (issue 31, item 8): every zone's
instances, MIGs, templates and workload policies in one request each, the four at once, where
the survey listed zone by zone (a list of zones first, then four requests a zone); beside them
only the AI zones' instances and MIGs, which Google hides from its lists (test_ai_zone_leftover);
and a zone Google could not reach is reported unchecked, never empty."""

from __future__ import annotations

import re

from tests.integration.discovery import document, record_traffic
from tests.integration.test_compute_cloud import ZONE, compute, launched, request  # noqa: F401
from tests.integration.test_compute_conformance import problems_in
from tpuwizard.core.cloud.ai_zones import with_ai_zones
from tpuwizard.core.cloud.types import MANAGED_BY
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.verified import reconcile

# A zone's or a region's whole list: what the survey zone by zone asked.
ZONAL_LIST = re.compile(
    r"/(zones/(?P<zone>[^/]+)/(instances|instanceGroupManagers)|regions/[^/]+/"
    r"(instanceTemplates|resourcePolicies))$"
)
AGGREGATED = ["instanceGroupManagers", "instanceTemplates", "instances", "resourcePolicies"]


def by_kind(traffic: list) -> tuple[list[str], list[str]]:
    """The aggregated lists asked (by kind), and the zones or regions listed alone."""
    aggregated = sorted(p.rsplit("/", 1)[-1] for _, p, *_ in traffic if "/aggregated/" in p)
    alone = sorted(m.group(0) for _, p, *_ in traffic if (m := ZONAL_LIST.search(p)))
    return aggregated, alone


def ai_zones_alone() -> list[str]:
    return sorted(
        f"/zones/{z}/{k}" for z in with_ai_zones([]) for k in ("instances", "instanceGroupManagers")
    )


def test_the_survey_is_four_aggregated_lists_and_finds_what_the_zone_s_lists_find(
    compute,  # noqa: F811
    monkeypatch,
):
    cloud = compute(delay=0.05)
    launched(cloud, request("spot", name="tpu-a"))
    launched(cloud, request("vm", name="tpu-b"))
    traffic = record_traffic(monkeypatch)
    surveyed = cloud.survey_everywhere(MANAGED_BY)
    asked = list(traffic)
    assert surveyed.unreachable == {}
    assert surveyed.nodes == {ZONE: cloud.list_nodes(ZONE, MANAGED_BY)}
    assert [n.name for n in surveyed.nodes[ZONE]] == ["tpu-a", "tpu-b"]
    assert by_kind(asked) == (AGGREGATED, ai_zones_alone())
    assert len(asked) == len(AGGREGATED) + len(ai_zones_alone())  # nothing else, all at once
    filters = {p.rsplit("/", 1)[-1]: q.get("filter") for _, p, q, *_ in asked if "/aggr" in p}
    assert filters["instances"] == '(labels.managed-by = "tpuwizard")'  # Google filters
    problems, _ = problems_in(asked, document("v1", api="compute"))
    assert not problems, "\n".join(problems)


def test_a_zone_google_cannot_reach_is_skipped_never_empty_and_no_zone_is_listed_alone(
    compute,  # noqa: F811
    monkeypatch,
    tmp_path,
):
    cloud = compute(faults=f"unreachable={ZONE}", delay=0.05)
    launched(cloud, request("vm", name="tpu-a"))  # labelled ours, in the zone not reached
    traffic = record_traffic(monkeypatch)
    found = reconcile(cloud, Ledger(tmp_path / "ledger.jsonl"), owner=None)
    assert ZONE in found.skipped and "not checked" in found.skipped[ZONE]
    assert ZONE not in found.refused  # not "your project may not use it": it may bill
    # The ledger is empty: the survey's requests and nothing else.
    assert by_kind(traffic) == (AGGREGATED, ai_zones_alone())
    assert len(traffic) == len(AGGREGATED) + len(ai_zones_alone())
