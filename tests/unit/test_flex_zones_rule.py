"""Where Flex-start may be asked for, by backend: one rule (google_errors.flex_zones) that the
launch's plan, the preflight, the zone lists and the stockout advice all apply. The TPU API has
its own Flex-start table; on Compute Engine Flex-start is the instance's provisioning model, so
it is wherever the machine type is (no Compute Engine page limits it to fewer zones)."""

from __future__ import annotations

import pytest

from tests.plans import launch_plan
from tpuwizard.core.choices import Phrase
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.diagnose.capacity import stockout_diagnosis
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.google_errors import flex_zones
from tpuwizard.core.plan import catalog
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Verdict
from tpuwizard.core.preflight.offer import check_offered
from tpuwizard.core.preflight.rest import Endpoints
from tpuwizard.core.routes import Route

CASES = [
    (accelerator, zone, backend)
    for accelerator in ("v5p-8", "v6e-4", "v6e-16")
    for zone in ("us-east5-a", "us-east5-b", "us-central1-a", "asia-northeast1-b")
    for backend in ("tpu-api", "compute")
]


def test_compute_engine_flex_start_is_where_the_machine_type_is():
    assert (
        flex_zones(catalog.parse_accelerator("v5p-8"), "tpu-api") == []
    )  # the TPU API's table has no v5p
    assert flex_zones(catalog.parse_accelerator("v5p-8"), "compute") == [
        "us-central1-a",
        "us-east5-a",
    ]
    assert "us-east5-b" in flex_zones(catalog.parse_accelerator("v6e-16"), "compute")
    assert "us-east5-b" not in flex_zones(catalog.parse_accelerator("v6e-16"), "tpu-api")
    assert (
        flex_zones(catalog.parse_accelerator("v5litepod-4"), "compute") == []
    )  # no Compute Engine machine type


def plan_refuses_flex(tmp_path, accelerator: str, zone: str, backend: str) -> bool:
    plan = launch_plan(
        accelerator=accelerator,
        zone=zone,
        project="practice-project",
        run_id="20261201-120000-zz01",
        route="flex",
        backend=backend,
        run_dir=tmp_path,
    )
    text = " ".join(p.text if isinstance(p, Phrase) else p for p in plan.problems())
    return "Flex-start is not offered" in text


def preflight_refuses_flex(accelerator: str, zone: str, backend: str) -> bool:
    ask = PreflightAsk("p", accelerator, zone, Route.FLEX, Backend(backend))
    everything = [accelerator, accelerator.split("-")[0] + "-4"]  # the zone lists every type
    reach = Reach(None, Endpoints(), lambda: everything)
    check = check_offered(ask, reach)
    return check.verdict is Verdict.FAIL and "Flex-start" in check.detail


@pytest.mark.parametrize(("accelerator", "zone", "backend"), CASES)
def test_the_plan_and_the_preflight_agree_per_backend(tmp_path, accelerator, zone, backend):
    expected = zone not in flex_zones(catalog.parse_accelerator(accelerator), backend)
    assert plan_refuses_flex(tmp_path, accelerator, zone, backend) is expected
    assert preflight_refuses_flex(accelerator, zone, backend) is expected


def test_the_stockout_advice_offers_flex_start_where_that_backend_has_it():
    tpu = stockout_diagnosis(
        Context(
            zone="us-east5-b",
            accelerator="v5p-8",
            slice=catalog.parse_accelerator("v5p-8"),
            backend="tpu-api",
        ),
        "x",
        False,
    )
    compute = stockout_diagnosis(
        Context(
            zone="us-east5-b",
            accelerator="v5p-8",
            slice=catalog.parse_accelerator("v5p-8"),
            backend="compute",
        ),
        "x",
        False,
    )
    assert not any("Flex-start" in str(s) for s in tpu.next_steps)
    assert any("Flex-start in us-central1-a, us-east5-a" in str(s) for s in compute.next_steps)


def test_the_preflights_flex_refusal_points_at_the_listing_of_flex_zones():
    ask = PreflightAsk("p", "v5litepod-4", "us-west1-c", Route.FLEX, Backend.TPU_API)
    reach = Reach(None, Endpoints(), lambda: ["v5litepod-4"])
    check = check_offered(ask, reach)
    assert check.verdict is Verdict.FAIL and "Flex-start" in check.detail
    assert check.fix is not None and check.fix.endswith("--route flex")
