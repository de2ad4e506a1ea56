"""Compute Engine's TPU quotas by name: the regions.get metrics are compute.v1.json's (neither the
client nor the sandbox may invent one), and the Cloud Quotas ids are candidates read by name, the
line saying which one governs and why."""

import json
from importlib import resources

import pytest

from tests.unit.fake_rest import FakeRest, P, ask, reach
from tpuwizard.core.cloud import quota_ids
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.preflight import quota
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.core.routes import Route
from tpuwizard.sandbox import quota_limits

CE = f"/v1/projects/{P}/locations/global/services/compute.googleapis.com/quotaInfos"
SPOT_V6E = "PREEMPTIBLE-TPU-V6E-per-project-region"
FAMILY = "TPUS-PER-TPU-FAMILY-per-project-region"


def enum_tpu_metrics() -> set[str]:
    folder = resources.files("googleapiclient.discovery_cache").joinpath("documents")
    doc = json.loads(folder.joinpath("compute.v1.json").read_text("utf-8"))
    return {m for m in doc["schemas"]["Quota"]["properties"]["metric"]["enum"] if "TPU" in m}


def test_the_tpu_metrics_are_compute_v1s_enum_in_the_client_and_the_sandbox():
    enum = enum_tpu_metrics()
    assert set(quota_ids.ENUM_TPU_METRICS) == enum
    assert set(quota_limits.REGION_TPU_METRICS) == enum
    used = {c.usage_metric for cs in quota_ids.COMPUTE_CANDIDATES.values() for c in cs}
    assert used - {None} <= enum


def test_the_sandbox_region_answers_no_metric_outside_the_enum():
    from tpuwizard.sandbox.faults import Faults

    answered = {q["metric"] for q in quota_limits.region_quotas(Faults(), P, "us-east5")}
    assert answered <= enum_tpu_metrics()


def info(quota_id, value, **dims):
    keys = ["region", *dims]
    entry = {"dimensions": {"region": "us-east5", **dims}, "details": {"value": str(value)}}
    return {"quotaId": quota_id, "dimensions": keys, "metricUnit": "1", "dimensionsInfos": [entry]}


def test_flex_start_reads_every_candidate_and_says_which_governs_and_why():
    family = info(FAMILY, 0, tpu_family="CT6E")
    rest = FakeRest({f"{CE}/{SPOT_V6E}": info(SPOT_V6E, 16), f"{CE}/{FAMILY}": family})
    reading = quota.read_quota(ask(backend=Backend.COMPUTE, route=Route.FLEX), reach(rest))
    detail = reading.check.detail
    # The preemptible pool governs (the documented rule); the family one is read and shown.
    assert reading.check.verdict is Verdict.PASS and reading.room == 16
    assert f"{SPOT_V6E} governs: Flex-start draws on preemptible quota" in detail
    assert f"reports disagree, also read: {FAMILY} limit 0 in us-east5" in detail
    assert {path for _, path, _ in rest.asked} == {f"{CE}/{SPOT_V6E}", f"{CE}/{FAMILY}"}


def test_a_candidate_the_project_lacks_passes_the_governing_role_on():
    # v5p on-demand: one report names TPU-V5P-per-project-region, another the family quota.
    rest = FakeRest({f"{CE}/{FAMILY}": info(FAMILY, 2, tpu_family="CT5P")})
    reading = quota.read_quota(ask("v5p-8", "us-east5-a", backend=Backend.COMPUTE), reach(rest))
    check = reading.check
    assert check.verdict is Verdict.FAIL and reading.room == 2
    assert f"{FAMILY} governs" in check.detail
    assert "not found for the project: TPU-V5P-per-project-region" in check.detail
    assert "--dimensions=region=us-east5,tpu_family=CT5P" in (check.fix or "")


def test_none_of_the_candidates_found_is_unknown_naming_them():
    reading = quota.read_quota(ask(backend=Backend.COMPUTE, route=Route.FLEX), reach(FakeRest()))
    assert reading.check.verdict is Verdict.UNKNOWN and reading.room is None
    assert SPOT_V6E in reading.check.detail and FAMILY in reading.check.detail


@pytest.mark.parametrize(("accelerator", "zone"), [("tpu7x-8", "us-central1-c")])
def test_a_generation_no_report_names_is_unknown_never_guessed(accelerator, zone):
    rest = FakeRest()
    reading = quota.read_quota(ask(accelerator, zone, backend=Backend.COMPUTE), reach(rest))
    assert reading.check.verdict is Verdict.UNKNOWN and "no source names" in reading.check.detail
    assert rest.asked == []


def test_the_tpu_api_s_guessed_ids_say_they_are_by_analogy():
    tpu = f"/v1/projects/{P}/locations/global/services/tpu.googleapis.com/quotaInfos"
    name = "TPUV5PPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{tpu}/{name}": info(name, 64)})
    check = quota.read_quota(ask("v5p-8", "us-east5-a"), reach(rest)).check
    assert "v5p's ids are by analogy" in check.detail
    v6e = "TPUV6EPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{tpu}/{v6e}": info(v6e, 64)})
    assert "analogy" not in quota.read_quota(ask(), reach(rest)).check.detail


@pytest.mark.parametrize(
    ("accelerator", "route", "wanted"),
    [
        ("v5litepod-4", "flex", "TPUV5sPreemptibleLitepodPerProjectPerRegionForTPUAPI"),
        ("v5litepod-4", "spot", "TPUV5sPreemptibleLitepodPerProjectPerRegionForTPUAPI"),
        ("v5litepod-4", "vm", "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI"),
        ("v5litepod-16", "vm", "TPUV5sLitepodPerProjectPerRegionForTPUAPI"),
        ("v6e-8", "flex", "TPUV6EPreemptiblePerProjectPerRegionForTPUAPI"),
        ("v6e-8", "vm", "TPUV6EPerProjectPerRegionForTPUAPI"),
    ],
)
def test_the_sandbox_defines_the_tpu_api_quota_the_preflight_asks(accelerator, route, wanted):
    """Issue 55.7: practice's Flex preflight said UNKNOWN for v5e's preemptible quota, an id the
    sandbox did not define (it made its own, TPUV5SLITEPODPreemptible...). The sandbox's ids are
    Google's, so the preflight's region-wide id is one it answers, and creates count against it."""
    bucket = quota.tpu_api_bucket(ask(accelerator=accelerator, route=route))
    generation = "v5e" if accelerator.startswith("v5lite") else "v6e"
    assert quota.TPU_API_QUOTAS[(generation, bucket)][0] == wanted
    defined = {q.quota_id for q in quota_limits.quotas(quota_limits.TPU_SERVICE)}
    assert wanted in defined
    assert quota_limits.node_quota(accelerator, route != "vm") == wanted
