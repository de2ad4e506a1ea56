"""An in-memory stand-in for the preflight's REST reads: answers by path, Google's error shapes,
and a log of what was asked (no network)."""

from __future__ import annotations

from typing import Any

from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.preflight.ask import PreflightAsk, Reach
from tpuwizard.core.preflight.rest import Answer, Endpoints
from tpuwizard.core.routes import Route

BASE = "http://google.invalid"
P = "my-project"


def error(code: int, status: str, message: str, reason: str | None = None, service: str = ""):
    details = []
    if reason:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
                "metadata": {"service": service, "consumer": f"projects/{P}"},
            }
        )
    body = {"error": {"code": code, "status": status, "message": message, "details": details}}
    return Answer(code, body)


def disabled(service: str) -> Answer:
    return error(
        403,
        "PERMISSION_DENIED",
        f"{service} has not been used in project 123 before or it is disabled.",
        "SERVICE_DISABLED",
        service,
    )


QUOTA_PROJECT = error(
    403,
    "PERMISSION_DENIED",
    "Your application is authenticating by using local Application Default Credentials. The "
    "cloudquotas.googleapis.com API requires a quota project, which is not set by default.",
)


class FakeRest:
    """``answers``: path (after the host) -> Answer or JSON body (200); anything else: 404."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.answers = dict(answers or {})
        self.asked: list[tuple[str, str, Any]] = []

    def _answer(self, method: str, url: str, body: Any = None) -> Answer:
        path = url.removeprefix(BASE)
        self.asked.append((method, path, body))
        found = self.answers.get(path)
        if found is None:
            return error(404, "NOT_FOUND", f"No such thing: {path}")
        if isinstance(found, Exception):
            raise found
        return found if isinstance(found, Answer) else Answer(200, found)

    def get(self, url: str, params: dict[str, str] | None = None) -> Answer:
        return self._answer("GET", url)

    def post(self, url: str, body: dict[str, Any]) -> Answer:
        return self._answer("POST", url, body)


def reach(rest: FakeRest | None, offered: list[str] | Exception | None = None) -> Reach:
    def types() -> list[str]:
        if isinstance(offered, Exception):
            raise offered
        return list(offered or [])

    return Reach(rest, Endpoints.all_at(BASE), types)  # type: ignore[arg-type]


def ask(
    accelerator: str | None = "v6e-4",
    zone: str | None = "us-east5-a",
    route: Route = Route.VM,
    backend: Backend = Backend.TPU_API,
    **extra: Any,
) -> PreflightAsk:
    return PreflightAsk(P, accelerator, zone, route, backend, **extra)
