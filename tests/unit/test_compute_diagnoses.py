"""Compute Engine's refusals diagnosed in the TPU API's vocabulary (issue 24): no capacity is a
stockout (failover offers other zones), a quota names the metric, the region and the command to
ask for more, v5e's 403 says to use the TPU API; never a traceback."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as gx

from tpuwizard.core.cloud.compute.errors import OperationError
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.errors import CreateFailed
from tpuwizard.core.plan import catalog
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.event_text import diagnosis_text

ZONE = "us-east5-a"
CTX = Context(
    project="p",
    zone=ZONE,
    accelerator="v6e-4",
    slice=catalog.parse_accelerator("v6e-4"),
    name="tpu-a",
    route="vm",
)


def failed(code: str, message: str, after: str | None = None, **detail: object) -> CreateFailed:
    errors = [{"code": code, "message": message, "errorDetails": [detail] if detail else []}]
    return CreateFailed(OperationError("operation-1", errors, 503, after=after))


def cli_steps(d) -> str:
    return " ".join(all_words(d.next_steps, "cli"))


def test_zone_resource_pool_exhausted_is_a_stockout_with_other_zones():
    err = failed(
        "ZONE_RESOURCE_POOL_EXHAUSTED",
        f"The zone 'projects/p/zones/{ZONE}' does not have enough resources available to "
        "fulfill the request.  Try a different zone, or try again later.",
    )
    d = diagnose(err, CTX)
    assert d.kind == "stockout" and "capacity" in d.title
    assert ZONE not in d.alternatives and d.alternatives  # failover has somewhere to go
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in d.explanation


def test_a_refused_call_with_the_same_code_is_a_stockout_too():
    err = gx.ServiceUnavailable(
        "ZONE_RESOURCE_POOL_EXHAUSTED: A ct6e-standard-4t VM instance "
        f"is currently unavailable in the {ZONE} zone."
    )
    assert diagnose(CreateFailed(err), CTX).kind == "stockout"


def test_internal_error_after_staging_is_capacity_but_not_before():
    assert diagnose(failed("INTERNAL_ERROR", "Internal error.", "STAGING"), CTX).kind == (
        "stockout"
    )
    d = diagnose(failed("INTERNAL_ERROR", "Internal error.", "PROVISIONING"), CTX)
    assert d.kind == "api_error" and "INTERNAL_ERROR" in d.explanation


def test_quota_exceeded_names_the_metric_the_region_and_the_command():
    err = failed(
        "QUOTA_EXCEEDED",
        "Quota 'TPUS_PER_TPU_FAMILY' exceeded.  Limit: 0.0 in region us-east5.",
        quotaInfo={
            "metricName": "compute.googleapis.com/tpus_per_tpu_family",
            "limitName": "TPUS-PER-TPU-FAMILY-per-project-region",
            "dimensions": {"region": "us-east5", "tpu_family": "CT6E"},
            "limit": 0,
        },
    )
    d = diagnose(err, CTX)
    assert d.kind == "quota"
    assert "TPUS_PER_TPU_FAMILY" in d.explanation and "us-east5" in d.explanation
    steps = cli_steps(d)
    assert (
        "gcloud quotas preferences create --service=compute.googleapis.com "
        "--quota-id=TPUS-PER-TPU-FAMILY-per-project-region --preferred-value=4 "
        "--dimensions=region=us-east5 --project=p"
    ) in steps
    assert "--backend tpu-api" in steps  # the other quota pool


def test_a_quota_refused_on_the_call_itself_is_a_quota_not_a_permission():
    # Compute answers an insert over quota with 403 and its own words.
    err = gx.Forbidden("Quota 'PREEMPTIBLE_TPU_V6E' exceeded.  Limit: 0.0 in region us-east5.")
    d = diagnose(err, CTX)
    assert d.kind == "quota" and "PREEMPTIBLE_TPU_V6E" in d.explanation
    assert "--quota-id=QUOTA_ID" in cli_steps(d) and "--dimensions=region=us-east5" in cli_steps(d)


def test_the_tpu_api_s_quota_keeps_its_own_diagnosis():
    err = gx.TooManyRequests(
        "Quota limit 'TPUV6EPreemptiblePerProjectPerRegionForTPUAPI' has been exceeded. "
        "Limit: 0 in region us-east5."
    )
    d = diagnose(err, CTX)
    assert d.kind == "quota" and "quotas preferences" not in cli_steps(d)


def test_the_machine_type_refusal_says_there_is_no_compute_engine_path():
    err = gx.Forbidden("This user agent is not allowed to use the machine type [ct5lp-hightpu-4t].")
    d = diagnose(
        err,
        Context(
            project="p",
            zone="us-west4-a",
            accelerator="v5litepod-4",
            slice=catalog.parse_accelerator("v5litepod-4"),
        ),
    )
    assert d.kind == "no_compute_path" and "v5litepod-4" in d.title
    assert "--backend tpu-api" in cli_steps(d)
    assert "permission" not in d.kind


@pytest.mark.parametrize("doing", ["create", "delete"])
def test_any_other_operation_error_is_worded_not_raised(doing):
    err = OperationError("op-9", [{"code": "RESOURCE_IN_USE", "message": "in use"}], doing=doing)
    d = diagnose(err, CTX)
    assert d.kind == "api_error" and "RESOURCE_IN_USE" in diagnosis_text(d)
    assert doing in d.title.lower() or doing in d.explanation
