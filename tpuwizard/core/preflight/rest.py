"""Google's REST APIs as the preflight reads them: where each is (Google's hosts, or the one
stand-in that serves them all in practice), one read with a timeout, and what a refused read
means (the check's own API off, a quota project missing, no permission) as an UNKNOWN with the
command that would let the check run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tpuwizard.core.preflight.model import Check, unknown

# Each call's own timeout: well under the check's (model.CHECK_TIMEOUT).
CALL_TIMEOUT = 10.0
SERVICE_USAGE = "serviceusage.googleapis.com"
BILLING = "cloudbilling.googleapis.com"
QUOTAS = "cloudquotas.googleapis.com"
ORG_POLICY = "orgpolicy.googleapis.com"
RESOURCE_MANAGER = "cloudresourcemanager.googleapis.com"
COMPUTE = "compute.googleapis.com"
TPU = "tpu.googleapis.com"


@dataclass(frozen=True)
class Endpoints:
    """The base URL of each API the preflight reads (no trailing slash)."""

    service_usage: str = f"https://{SERVICE_USAGE}"
    billing: str = f"https://{BILLING}"
    quotas: str = f"https://{QUOTAS}"
    org_policy: str = f"https://{ORG_POLICY}"
    resource_manager: str = f"https://{RESOURCE_MANAGER}"
    compute: str = f"https://{COMPUTE}"

    @classmethod
    def all_at(cls, base: str) -> Endpoints:
        base = base.rstrip("/")
        return cls(base, base, base, base, base, base)


def endpoints_for(tpu_endpoint: str, google_tpu_endpoint: str) -> Endpoints:
    """Google's hosts with Google's TPU API; else the stand-in serves every one of them (as
    :func:`tpuwizard.core.cloud.iam.endpoints_for` does for IAM)."""
    if tpu_endpoint.rstrip("/") == google_tpu_endpoint.rstrip("/"):
        return Endpoints()
    return Endpoints.all_at(tpu_endpoint)


@dataclass(frozen=True)
class Answer:
    """One read's answer: ``status`` 0 when nothing came back (``problem`` says why)."""

    status: int
    body: dict[str, Any] = field(default_factory=dict)
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def error(self) -> dict[str, Any]:
        error = self.body.get("error")
        return error if isinstance(error, dict) else {}

    @property
    def message(self) -> str:
        return str(self.error.get("message") or self.problem or f"HTTP {self.status}")

    def error_info(self) -> dict[str, Any]:
        """The google.rpc.ErrorInfo among the error's details, if any."""
        for detail in self.error.get("details") or []:
            if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("ErrorInfo"):
                return detail
        return {}


class Rest:
    """Reads over one ``AuthorizedSession`` (thread-safe enough for concurrent reads: each
    request is its own)."""

    def __init__(self, credentials: Any, timeout: float = CALL_TIMEOUT) -> None:
        from google.auth.transport.requests import AuthorizedSession

        self.session = AuthorizedSession(credentials)
        self.timeout = timeout

    def get(self, url: str, params: dict[str, str] | None = None) -> Answer:
        return self._call("GET", url, params=params)

    def post(self, url: str, body: dict[str, Any]) -> Answer:
        return self._call("POST", url, json=body)

    def _call(self, method: str, url: str, **kwargs: Any) -> Answer:
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        except Exception as err:  # no answer at all: the check says it could not tell
            return Answer(0, problem=f"{type(err).__name__}: {err}")
        try:
            payload = response.json()
        except ValueError:
            payload = {}
        return Answer(response.status_code, payload if isinstance(payload, dict) else {})


def cannot_read(name: str, answer: Answer, service: str, project: str, what: str) -> Check:
    """The UNKNOWN for a read of ``what`` (through ``service``'s API) that did not answer 200,
    with the one command that would let it run where there is one."""
    message = answer.message
    low = message.lower()
    if answer.status == 0:
        return unknown(name, f"could not reach {service} to read {what} ({answer.problem})")
    if answer.status == 403 and "quota project" in low:
        # User ADC without a quota project: several of these APIs refuse them (issue 25).
        return unknown(
            name,
            f"{service} needs a quota project, which your Application Default Credentials "
            f"lack, to read {what}",
            f"gcloud auth application-default set-quota-project {project}",
        )
    info = answer.error_info()
    if answer.status == 403 and (
        info.get("reason") == "SERVICE_DISABLED" or "it is disabled" in low
    ):
        disabled = str((info.get("metadata") or {}).get("service") or service)
        return unknown(
            name,
            f"{disabled} is not enabled in project {project}, so {what} could not be read",
            f"gcloud services enable {disabled} --project {project}",
        )
    if answer.status == 403:
        return unknown(name, f"you may not read {what} ({_short(message)})")
    if answer.status == 401:
        return unknown(
            name,
            f"the credentials were refused reading {what} (401)",
            "gcloud auth application-default login",
        )
    if answer.status == 404:
        return unknown(name, f"{service} answered 404 reading {what} ({_short(message)})")
    return unknown(name, f"{service} answered {answer.status} reading {what} ({_short(message)})")


def _short(message: str, limit: int = 160) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"
