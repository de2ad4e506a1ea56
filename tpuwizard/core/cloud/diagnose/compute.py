"""Diagnoses of Compute Engine's refusals, in the TPU API's vocabulary: no capacity is the
"stockout" kind (so failover offers other zones), a quota names the metric, the region and the
command that asks for more, and v5e's 403 says to use the TPU API. Split from
:mod:`tpuwizard.core.cloud.diagnose.failure`, which asks this module first.
"""

from __future__ import annotations

from tpuwizard.core.choices import Choice, Said, phrase
from tpuwizard.core.cloud.compute import errors as ce
from tpuwizard.core.cloud.diagnose import tpu7x_access
from tpuwizard.core.cloud.diagnose.capacity import quota_diagnosis, stockout_diagnosis
from tpuwizard.core.cloud.diagnose.diagnosis import Context, Diagnosis


def compute_diagnosis(err: BaseException, ctx: Context, spot: bool) -> Diagnosis | None:
    """The diagnosis of a Compute Engine refusal, or None when ``err`` is not one of them."""
    if ce.capacity_refused(err):
        return stockout_diagnosis(ctx, _capacity_words(err), spot)
    facts = ce.quota_refused(err)
    if facts is not None:
        return _quota(facts, ctx)
    if ce.no_compute_path(err):
        return _no_compute_path(ctx)
    if isinstance(err, ce.OperationError) and ce.REQUEST_REFUSED_CODE in err.codes:
        return _request_refused(err)
    if isinstance(err, ce.OperationError) and err.doing == "create":
        return Diagnosis(
            "api_error",
            "Compute Engine refused to create the TPU VM",
            f"The create operation ended with {err}. tpuwizard deletes whatever it left.",
            ["Run tpuwizard status to see what exists, then try again or choose another zone."],
        )
    if isinstance(err, ce.OperationError):
        return Diagnosis(
            "api_error",
            f"A Compute Engine {err.doing} did not succeed",
            f"The {err.doing} operation ended with {err}.",
            ["Run tpuwizard status to see what still exists, and tpuwizard teardown to retry."],
        )
    return None


def _capacity_words(err: BaseException) -> str:
    if isinstance(err, ce.OperationError) and ce.INTERNAL_CODE in err.codes:
        return (
            "the VM waited in STAGING and then failed with INTERNAL_ERROR, which on Compute "
            "Engine means no TPU came free to start it"
        )
    return "Compute Engine answered ZONE_RESOURCE_POOL_EXHAUSTED"


def _quota(facts: ce.QuotaFacts, ctx: Context) -> Diagnosis:
    project = ctx.project or "PROJECT_ID"
    quota = facts.quota
    region = quota.region or (ctx.zone.rsplit("-", 1)[0] if ctx.zone else None)
    where = f" in {ctx.zone}" if ctx.zone else ""
    d = quota_diagnosis(quota, ctx, project, where)
    chips = ctx.slice.chips if ctx.slice is not None else None
    wanted = str(chips) if chips else "N"
    quota_id = facts.quota_id or "QUOTA_ID"
    dims = f" --dimensions=region={region}" if region else ""
    command = (
        f"gcloud quotas preferences create --service=compute.googleapis.com "
        f"--quota-id={quota_id} --preferred-value={wanted}{dims} --project={project}"
    )
    steps: list[Said] = [f"Ask for more: {command}"]
    if facts.quota_id is None:
        steps.append(
            f"QUOTA_ID: the id of {quota.name or 'the TPU quota'} under IAM & Admin → Quotas "
            "(service compute.googleapis.com)."
        )
    if tpu7x_access.is_tpu7x(ctx.slice):
        # A zero TPU7x quota may be a project without access (unconfirmed: tpu7x_access).
        steps.append(f"A limit of 0 may mean no TPU7x access: {tpu7x_access.ACCESS_NOTE}.")
    else:
        steps.append(
            phrase(
                "Compute Engine's TPU quota is not the Cloud TPU API's: {0} draws on the other "
                "pool, which may have room.",
                Choice("backend", "tpu-api"),
            )
        )
    return Diagnosis(d.kind, d.title, d.explanation, steps + list(d.next_steps), d.alternatives)


def _no_compute_path(ctx: Context) -> Diagnosis:
    accelerator = ctx.accelerator or "this TPU"
    return Diagnosis(
        "no_compute_path",
        f"Compute Engine does not create {accelerator}",
        "Google says this user agent is not allowed to use the machine type: this generation "
        "has no Compute Engine path (v5e is served by the Cloud TPU API only). Nothing was "
        "created.",
        [phrase("Launch it through the Cloud TPU API: {0}.", Choice("backend", "tpu-api"))],
    )


def _request_refused(err: ce.OperationError) -> Diagnosis:
    """The course's Route 2B: Google refused the MIG's resize request itself."""
    said = "; ".join(str(e.get("message") or "") for e in err.errors)
    return Diagnosis(
        "resize_request_refused",
        "Compute Engine refused the MIG's resize request (the course's Route 2B)",
        f"Google answered: {said}. Users report this refusal for MIGs of TPU VMs, though "
        "Google's about-resize-requests-mig page documents resize requests. No VM was asked "
        "for; tpuwizard deletes the MIG and its template, and verifies both gone.",
        [
            "Leave out --via resize-request: tpuwizard's default asks for Flex-start without a "
            "resize request (one FLEX_START instance for a single-host type; bulk mode, a BULK "
            "MIG, which Google recommends, for a slice).",
            "Run tpuwizard status to see that nothing is left.",
        ],
    )
