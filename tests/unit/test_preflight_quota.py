"""The quota check: the bucket each backend and route draws on, its limit where the launch lands
(region and zone), the shortfall's request line, and the room it leaves for ``--backend auto``."""

from tests.plans import launch_plan
from tests.unit.fake_rest import QUOTA_PROJECT, FakeRest, P, ask, disabled, reach
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.preflight import quota
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.core.routes import Route

TPU = f"/v1/projects/{P}/locations/global/services/tpu.googleapis.com/quotaInfos"
CE = f"/v1/projects/{P}/locations/global/services/compute.googleapis.com/quotaInfos"


def info(quota_id, *entries, dims=("region",), unit="1"):
    return {
        "quotaId": quota_id,
        "dimensions": list(dims),
        "metricUnit": unit,
        "dimensionsInfos": [{"dimensions": d, "details": {"value": str(v)}} for d, v in entries],
    }


def region_info(quota_id, value, region="us-east5"):
    return info(quota_id, ({"region": region}, value), ({}, 1000))


def test_each_route_draws_on_its_bucket():
    assert quota.tpu_api_bucket(ask("v5litepod-4", "us-central1-a")) == "serving"
    assert quota.tpu_api_bucket(ask("v5litepod-16", "us-central1-a")) == "standard"
    assert (
        quota.tpu_api_bucket(ask("v5litepod-4", "us-central1-a", route=Route.SPOT)) == "preemptible"
    )
    assert quota.tpu_api_bucket(ask(route=Route.FLEX)) == "preemptible"


def test_enough_quota_passes_and_reports_the_room():
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{TPU}/{name}": region_info(name, 16)})
    reading = quota.read_quota(ask(), reach(rest))
    assert reading.check.verdict is Verdict.PASS and reading.room == 16
    assert name in reading.check.detail and "16" in reading.check.detail


def test_a_shortfall_names_the_metric_the_numbers_and_the_request_line():
    name = "TPUV6EPreemptiblePerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{TPU}/{name}": region_info(name, 0)})
    reading = quota.read_quota(ask(route=Route.SPOT), reach(rest))
    check = reading.check
    assert check.verdict is Verdict.FAIL and reading.room == 0
    assert (
        name in check.detail
        and "allows 0 in us-east5" in check.detail
        and "4 chips" in check.detail
    )
    assert check.fix is not None and check.fix.startswith("gcloud quotas preferences create")
    assert f"--quota-id={name}" in check.fix and "--dimensions=region=us-east5" in check.fix
    assert "--preferred-value=4" in check.fix


def test_the_zone_bucket_binds_too():
    region, zone = "TPUV6EPerProjectPerRegionForTPUAPI", "TPUV6EPerProjectPerZoneForTPUAPI"
    rest = FakeRest(
        {
            f"{TPU}/{region}": region_info(region, 64),
            f"{TPU}/{zone}": info(
                zone, ({"zone": "us-east5-a"}, 2), ({"zone": "us-east5-b"}, 64), dims=("zone",)
            ),
        }
    )
    check = quota.read_quota(ask(), reach(rest)).check
    assert check.verdict is Verdict.FAIL and zone in check.detail
    assert "--dimensions=zone=us-east5-a" in (check.fix or "")


def test_the_entry_without_a_region_stands_for_regions_not_listed():
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{TPU}/{name}": info(name, ({"region": "us-central1"}, 64), ({}, 2))})
    assert quota.read_quota(ask(), reach(rest)).check.verdict is Verdict.FAIL


def test_compute_engine_reads_its_family_quota_with_the_family_dimension():
    name = "TPUS-PER-TPU-FAMILY-per-project-region"
    body = info(
        name,
        ({"region": "us-east5", "tpu_family": "CT5P"}, 64),
        ({"region": "us-east5", "tpu_family": "CT6E"}, 0),
        dims=("region", "tpu_family"),
    )
    reading = quota.read_quota(
        ask(backend=Backend.COMPUTE), reach(FakeRest({f"{CE}/{name}": body}))
    )
    assert reading.check.verdict is Verdict.FAIL and reading.room == 0
    assert "--dimensions=region=us-east5,tpu_family=CT6E" in (reading.check.fix or "")
    spot = "PREEMPTIBLE-TPU-V6E-per-project-region"
    rest = FakeRest({f"{CE}/{spot}": region_info(spot, 8)})
    assert quota.read_quota(ask(backend=Backend.COMPUTE, route=Route.SPOT), reach(rest)).room == 8


def test_unlimited_passes():
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{TPU}/{name}": region_info(name, -1)})
    reading = quota.read_quota(ask(), reach(rest))
    assert reading.check.verdict is Verdict.PASS and "unlimited" in reading.check.detail


def test_no_known_quota_id_is_unknown_and_so_is_a_generation_no_source_names():
    reading = quota.read_quota(ask(), reach(FakeRest()))  # every id answers 404
    assert reading.check.verdict is Verdict.UNKNOWN and reading.room is None
    v3 = quota.read_quota(ask("v3-8", "europe-west4-a"), reach(FakeRest()))
    assert v3.check.verdict is Verdict.UNKNOWN and "no source names" in v3.check.detail


def test_cloud_quotas_off_or_without_a_quota_project_is_unknown_with_the_command():
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    off = FakeRest({f"{TPU}/{name}": disabled("cloudquotas.googleapis.com")})
    check = quota.read_quota(ask(), reach(off)).check
    assert check.verdict is Verdict.UNKNOWN
    assert check.fix == f"gcloud services enable cloudquotas.googleapis.com --project {P}"
    adc = FakeRest({f"{TPU}/{name}": QUOTA_PROJECT})
    check = quota.read_quota(ask(), reach(adc)).check
    assert check.fix == f"gcloud auth application-default set-quota-project {P}"


def test_v5p_counted_in_tensorcores_needs_two_per_chip():
    name = "TPUV5PPerProjectPerZoneForTPUAPI"
    body = info(name, ({"zone": "us-east5-a"}, 6), dims=("zone",), unit="{TensorCore}")
    check = quota.read_quota(
        ask("v5p-8", "us-east5-a"), reach(FakeRest({f"{TPU}/{name}": body}))
    ).check
    assert check.verdict is Verdict.FAIL and "8 TensorCores" in check.detail


SPOT_V6E = "PREEMPTIBLE-TPU-V6E-per-project-region"
REGION = f"/compute/v1/projects/{P}/regions/us-east5"


def spot_metric(limit):
    body = region_info(SPOT_V6E, limit)
    return dict(body, metric="compute.googleapis.com/preemptible_tpu_v6e")


def region_quotas(*entries):
    """regions.get's answer: quotas[] as compute.v1.json's Quota (limit and usage are doubles)."""
    return {"name": "us-east5", "quotas": [dict(e) for e in entries]}


def test_compute_engine_subtracts_the_usage_regions_get_reports_by_its_enum_metric():
    # v5e's quota has a metric in compute.v1.json's enum (TPU_LITE_PODSLICE_V5): usage is read.
    lite = "TPU-LITE-PODSLICE-V5-per-project-region"
    used = {"metric": "TPU_LITE_PODSLICE_V5", "limit": 8.0, "usage": 6.0}
    cpus = {"metric": "CPUS", "limit": 24.0, "usage": 0.0}
    region = f"/compute/v1/projects/{P}/regions/us-central1"
    body = region_info(lite, 8, "us-central1")
    rest = FakeRest({f"{CE}/{lite}": body, region: region_quotas(cpus, used)})
    v5e = ask("v5litepod-4", "us-central1-a", backend=Backend.COMPUTE)
    reading = quota.read_quota(v5e, reach(rest))
    check = reading.check
    # 8 allowed, 6 in use: the 4 chips asked for do not fit, though the limit alone would say so.
    assert check.verdict is Verdict.FAIL and reading.room == 2
    assert "allows 8 in us-central1, 6 used, so 2 left" in check.detail
    assert "--preferred-value=10" in (check.fix or "")  # what is used plus what is asked
    rest.answers[region] = region_quotas(cpus, dict(used, usage=2.0))
    reading = quota.read_quota(v5e, reach(rest))
    assert reading.check.verdict is Verdict.PASS and reading.room == 6
    assert f"{lite} limit 8, 2 used in us-central1" in reading.check.detail
    assert "usage not known" not in reading.check.detail


def test_no_usage_is_read_by_a_name_outside_compute_v1s_enum():
    # A Region listing PREEMPTIBLE_TPU_V6E (a name Google does not publish) is not believed,
    # nor even asked: v6e has no metric in the enum, so its usage is not known, never 0.
    invented = {"metric": "PREEMPTIBLE_TPU_V6E", "limit": 8.0, "usage": 6.0}
    rest = FakeRest({f"{CE}/{SPOT_V6E}": spot_metric(8), REGION: region_quotas(invented)})
    reading = quota.read_quota(ask(backend=Backend.COMPUTE, route=Route.SPOT), reach(rest))
    assert reading.check.verdict is Verdict.PASS and reading.room == 8
    assert "usage not known" in reading.check.detail and "6 used" not in reading.check.detail
    assert all(path != REGION for _, path, _ in rest.asked)


def test_where_no_usage_is_reported_the_line_says_so():
    # The TPU API: Cloud Quotas alone, which reports no usage.
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    tpu_api = quota.read_quota(ask(), reach(FakeRest({f"{TPU}/{name}": region_info(name, 16)})))
    assert "limit 16 in us-east5" in tpu_api.check.detail
    assert "usage not known" in tpu_api.check.detail
    # Compute Engine whose regions.get cannot be read: the limit alone, said as such.
    lite = "TPU-LITE-PODSLICE-V5-per-project-region"
    refused = FakeRest({f"{CE}/{lite}": region_info(lite, 8, "us-central1")})  # regions.get: 404
    v5e = ask("v5litepod-4", "us-central1-a", backend=Backend.COMPUTE)
    check = quota.read_quota(v5e, reach(refused)).check
    assert check.verdict is Verdict.PASS and "usage not known" in check.detail


def test_fan_out_needs_quota_for_every_request_at_once():
    # 16 chips cover one v6e-4, and three of them in flight at once (--fan-out), not five.
    name = "TPUV6EPerProjectPerRegionForTPUAPI"
    rest = FakeRest({f"{TPU}/{name}": region_info(name, 16)})
    three = quota.read_quota(ask(at_once=3), reach(rest)).check
    assert three.verdict is Verdict.PASS and "3 requests of v6e-4 at once" in three.detail
    five = quota.read_quota(ask(at_once=5), reach(rest)).check
    assert five.verdict is Verdict.FAIL
    assert "5 requests of v6e-4 at once (--fan-out) needs 20 chips" in five.detail
    assert "--preferred-value=20" in (five.fix or "")


def test_fan_out_counts_the_requests_in_the_first_zone_s_region(tmp_path):
    from tpuwizard.session.preflight import fan_out_in_region

    zones = ("us-east5-a", "us-east5-b", "europe-west4-a")
    base = {"accelerator": "v6e-4", "zone": zones[0], "project": P, "run_id": "r"}
    plan = launch_plan(**base, run_dir=tmp_path, zones=zones, fan_out=True)  # type: ignore[arg-type]
    assert fan_out_in_region(plan) == 2  # europe-west4's request draws on that region's quota
    failover = launch_plan(**base, run_dir=tmp_path, zones=zones)  # type: ignore[arg-type]
    assert fan_out_in_region(failover) == 1  # one request at a time


def test_the_launch_is_told_when_the_quota_for_every_request_was_read(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from tpuwizard.core.launch.plan.answers import LaunchAnswers
    from tpuwizard.core.launch.plan.parts import Where
    from tpuwizard.core.plan.catalog import parse_accelerator
    from tpuwizard.core.preflight.model import passed, unknown
    from tpuwizard.session import preflight
    from tpuwizard.session.prepare.stages import Pipeline

    asked: list[int] = []

    def checked(zones: tuple[str, ...], check) -> bool:
        """The pipeline's preflight stage over a --fan-out plan, its checks answering
        ``check``: whether the launch is told the quota was read for every request."""

        def run(session, ask, made):
            asked.append(ask.at_once)  # the requests at once the quota was read for
            return [check]

        monkeypatch.setattr(preflight, "checks", run)
        answers = LaunchAnswers(
            Where(parse_accelerator("v6e-4"), zones[0], P, zones=zones, fan_out=True)
        )
        pipe = Pipeline(answers, ("r", tmp_path), P, True, SimpleNamespace(practice=False))  # type: ignore[arg-type]
        for stage in (pipe.stage_backend, pipe.stage_defaults, pipe.stage_preflight):
            stage()
        return pipe.checked().fan_out_quota_checked

    zones = ("us-east5-a", "us-east5-b")
    assert checked(zones, passed(quota.NAME, "covers"))
    assert not checked(zones, unknown(quota.NAME, "not read"))
    # A zone in another region draws on a quota that was not read: not "all of them".
    assert not checked((*zones, "europe-west4-a"), passed(quota.NAME, "covers"))
    assert asked == [2, 2, 2]
