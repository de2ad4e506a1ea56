"""Who may ask at all: credentials, the APIs the backend needs enabled, and billing linked."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tpuwizard.core.cloud.backends import COMPUTE as COMPUTE_BACKEND
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.model import Check, failed, in_parallel, passed, unknown
from tpuwizard.core.preflight.rest import BILLING, COMPUTE, SERVICE_USAGE, TPU, cannot_read

CREDENTIALS, APIS, BILLING_NAME = "Credentials", "APIs enabled", "Billing"
ADC_LOGIN = "gcloud auth application-default login"


def check_credentials(
    load: Callable[[], Any], account: str | None, source: str | None
) -> tuple[Check, Any]:
    """Application Default Credentials (what tpuwizard's calls use, unlike gcloud's own login):
    ``load`` is ``google.auth.default``; ``account`` gcloud's active account, if any."""
    try:
        credentials = load()
    except Exception as err:
        if account:
            detail = (
                f"gcloud is signed in as {account}, but Application Default Credentials (what "
                f"tpuwizard uses) are not set ({type(err).__name__})"
            )
        else:
            detail = f"no Application Default Credentials were found ({type(err).__name__})"
        return failed(CREDENTIALS, detail, ADC_LOGIN), None
    where = f" from {source}" if source else ""
    return passed(CREDENTIALS, f"Application Default Credentials{where}"), credentials


def services_for(backend: str) -> tuple[str, ...]:
    """The APIs a create on ``backend`` needs enabled in the project."""
    return (COMPUTE,) if backend == COMPUTE_BACKEND else (TPU,)


def check_apis(ask: PreflightAsk, reach: Reach) -> Check:
    """Service Usage's ``services.get`` for each API the backend needs: state ENABLED."""
    if reach.rest is None:
        return unknown(APIS, "no credentials to read them with")
    services = services_for(ask.backend)
    base = f"{reach.endpoints.service_usage}/v1/projects/{ask.project}/services"
    answers = in_parallel(*[functools.partial(reach.rest.get, f"{base}/{s}") for s in services])
    off = []
    for service, answer in zip(services, answers, strict=True):
        if not answer.ok:
            return cannot_read(APIS, answer, SERVICE_USAGE, ask.project, f"whether {service} is on")
        if str(answer.body.get("state", "")).upper() != "ENABLED":
            off.append(service)
    if off:
        return failed(
            APIS,
            f"{', '.join(off)} {'is' if len(off) == 1 else 'are'} not enabled in project "
            f"{ask.project}: every create would answer 403",
            f"gcloud services enable {' '.join(off)} --project {ask.project}",
        )
    return passed(APIS, f"{', '.join(services)} enabled")


def check_billing(ask: PreflightAsk, reach: Reach) -> Check:
    """Cloud Billing's ``projects.getBillingInfo``: billingEnabled."""
    if reach.rest is None:
        return unknown(BILLING_NAME, "no credentials to read it with")
    answer = reach.rest.get(f"{reach.endpoints.billing}/v1/projects/{ask.project}/billingInfo")
    if not answer.ok:
        return cannot_read(BILLING_NAME, answer, BILLING, ask.project, "the project's billing")
    if answer.body.get("billingEnabled") is True:
        account = answer.body.get("billingAccountName") or "a billing account"
        return passed(BILLING_NAME, f"linked to {account}")
    return failed(
        BILLING_NAME,
        f"no billing account is linked to project {ask.project}: Google creates no TPU without "
        "one (`gcloud billing accounts list` shows yours)",
        f"gcloud billing projects link {ask.project} --billing-account=BILLING_ACCOUNT_ID",
    )
