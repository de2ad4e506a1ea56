"""A session the pipeline before create can run against in memory (session/prepare/): what
``session/services.py``'s ``PreparesLaunches`` names, over :class:`tests.fakes.MemoryCloud`'s
world, with no sandbox process, no socket and no thread of its own.

Where the pipeline reads Google it reads the world's faults (a ``Faults`` from the sandbox's own
spec, ``MemorySession.faulty("no_billing=1")``), answered by the sandbox's own handlers: the
preflight's REST reads (Service Usage, Billing, Cloud Quotas, Org Policy: ``preflight_routes``;
Compute Engine's project, region, routers and firewalls: the sandbox's Compute routes; Resource
Manager and IAM: ``iam_routes``), and each backend's list of a zone's types (the world's zone
tables). So the real preflight checks and the real check before create (``check_watchdog``)
decide, as they do against the sandbox, in milliseconds.

The one stand-in: Google's HTTP transport. ``install`` gives google-auth's ``AuthorizedSession``
(what the preflight's ``Rest`` and the watchdog's check read through) an adapter for
:data:`ENDPOINT` that hands each request to those handlers in process; every other address goes
out as before.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qs, urlsplit

import requests
from google.auth.credentials import AnonymousCredentials
from requests.adapters import BaseAdapter

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.compute.body import accelerator_of
from tpuwizard.core.cloud.endpoint import GOOGLE_ENDPOINT
from tpuwizard.core.cloud.iam import WatchdogCheck, check_watchdog, endpoints_for
from tpuwizard.sandbox import google, iam_routes, preflight_routes
from tpuwizard.sandbox.compute import google as compute_google
from tpuwizard.sandbox.compute import routes as compute_routes
from tpuwizard.sandbox.faults import Faults, parse_faults
from tpuwizard.sandbox.model import ApiError, error_body

if TYPE_CHECKING:
    import pytest

    from tpuwizard.sandbox.state import SandboxState

# No host answers it: only the adapter ``install`` mounts does (http, as the sandbox's).
ENDPOINT = "http://google.memory.invalid"


class _NoStore:
    """The state file's transaction: the preflight's reads change nothing to hold."""

    def transaction(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


@dataclass
class _ReadsOnly:
    """The part of the sandbox's state the preflight's reads look at: its faults. (A read that
    touched the nodes or the VMs would fail here, loudly: none of the pipeline's does.)"""

    faults: Faults
    store: _NoStore = field(default_factory=_NoStore)

    def tick(self) -> None:
        """Nothing is under way in a world the pipeline only reads."""


def _no_token() -> None:
    """The sandbox's bearer token: none in memory (AnonymousCredentials sends none)."""


class MemoryGoogle(BaseAdapter):
    """Google's REST APIs as the sandbox answers them, from ``faults``, in process."""

    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.state = cast("SandboxState", _ReadsOnly(faults))
        self.faults = faults
        self.asked: list[tuple[str, str]] = []  # (method, path) of each read

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        url = urlsplit(request.url or "")
        method, path = request.method or "GET", url.path
        self.asked.append((method, path))
        body = request.body or b""
        raw = body.encode() if isinstance(body, str) else body
        assert isinstance(raw, bytes), "Google's clients send a body whole, never streamed"
        if preflight_routes.serves(path):
            quota = request.headers.get("x-goog-user-project")
            quota_project = quota.decode() if isinstance(quota, bytes) else quota
            args = (self.state, method, path, url.query, raw, _no_token, quota_project)
            status, body = preflight_routes.answer(*args)
        elif compute_routes.serves(path):
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            status, body = compute_routes.answer(self.state, method, path, query, raw, _no_token)
        else:
            status, body = self._iam(method, path, json.loads(raw) if raw else {})
        response = requests.Response()
        response.status_code, response.url, response.request = status, request.url or "", request
        response._content = json.dumps(body).encode()
        response.headers["Content-Type"] = "application/json"
        return response

    def _iam(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        try:
            found = iam_routes.answer(self.faults, method, path, body)
        except ApiError as err:
            return err.http, error_body(err.http, err.status, err.message, err.details)
        if found is None:
            return 404, error_body(404, "NOT_FOUND", f"No such method: {method} {path}")
        return 200, found

    def close(self) -> None:
        """Nothing to close: no connection was opened."""


def install(monkeypatch: pytest.MonkeyPatch, faults: Faults) -> MemoryGoogle:
    """google-auth's sessions, for this test, reach :data:`ENDPOINT` through a
    :class:`MemoryGoogle` of ``faults``."""
    from google.auth.transport import requests as google_requests

    served = MemoryGoogle(faults)
    session_class = google_requests.AuthorizedSession
    made = session_class.__init__

    def mounted(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.mount(ENDPOINT, served)

    # Its own __init__ names the class (super(AuthorizedSession, self)): wrapped, not replaced.
    monkeypatch.setattr(session_class, "__init__", mounted)
    return served


class MemoryTypes(MemoryCloud):
    """The in-memory cloud, with what the preflight asks of a backend's client beyond the Cloud
    protocol: the zone's accelerator types (each backend's own table, as the sandbox lists them),
    and where a practice session's reads go (``endpoint``, ``credentials``)."""

    endpoint: str = ENDPOINT
    credentials: Any = None

    def accelerator_types(self, zone: str) -> list[str]:
        self._request("list_accelerator_types", zone, "", "GET")
        if self.backend == "tpu-api":
            return list(google.api_zone_table().get(zone, []))
        machines = compute_google.zone_table().get(zone, [])
        return sorted({a for m in machines if (a := accelerator_of(m.name))})


@dataclass
class MemoryKept:
    """The kept nodes, as the keep stage asks them: the names settled."""

    settled: list[str] = field(default_factory=list)

    def settle(self, name: str) -> None:
        self.settled.append(name)


@dataclass
class MemorySession:
    """``PreparesLaunches`` over a memory world (build it with :meth:`faulty`): a practice
    session by default, whose project is the world's. ``runs``: where new runs' folders would go
    (nothing is written there)."""

    runs: Path
    faults: Faults
    reads: MemoryGoogle
    project: str | None = "practice-project"
    practice: bool = True
    kept: MemoryKept = field(default_factory=MemoryKept)
    readied: int = 0  # prepare_to_keep's calls
    clouds: dict[str, MemoryTypes] = field(default_factory=dict)
    _runs: Iterator[int] = field(default_factory=lambda: iter(range(1, 1000)))

    @classmethod
    def faulty(
        cls, monkeypatch: pytest.MonkeyPatch, runs: Path, spec: str = "", **fields: Any
    ) -> MemorySession:
        """A session over a world with the faults of a sandbox spec, e.g. ``"sa_no_delete=1"``."""
        faults = parse_faults(spec, memory=True)
        session = cls(runs, faults, install(monkeypatch, faults), **fields)
        for backend in (Backend.TPU_API, Backend.COMPUTE):
            cloud = MemoryTypes(project=session.project or "", backend=backend, faults=faults)
            cloud.credentials = AnonymousCredentials()
            session.clouds[backend] = cloud
        return session

    @property
    def cloud(self) -> Any:
        return self.clouds["tpu-api"]

    def cloud_for(self, backend: str) -> Any:
        return self.clouds[backend]

    def new_run(self) -> tuple[str, Path]:
        run_id = f"run-{next(self._runs)}"
        return run_id, self.runs / run_id

    def watchdog_check(self, service_account: str | None = None) -> WatchdogCheck:
        """The real check before create, its reads answered by the world's faults."""
        iam, crm = endpoints_for(ENDPOINT, GOOGLE_ENDPOINT)
        return check_watchdog(
            AnonymousCredentials(), self.project or "", service_account, iam, crm, 5.0
        )

    def prepare_to_keep(self) -> None:
        self.readied += 1

    @property
    def calls(self) -> list[str]:
        """Every call either backend's cloud was asked, by method."""
        return [c.method for cloud in self.clouds.values() for c in cloud.calls]
