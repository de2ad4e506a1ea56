"""Compute Engine's reads as plain REST calls through google-auth's ``AuthorizedSession``, as the
preflight makes its own (core/preflight/rest.py): the instances of a zone or of every zone, a
slice's parts (MIGs, regional templates, workload policies), the zones and the TPU machine types.

Why not google-cloud-compute for these: importing ``google.cloud.compute_v1`` takes seconds
(3.35 s on a quiet machine), and the leftover check and ``status`` need nothing else from it.
Creates and deletes keep Google's client (client.py, slices.py), which is imported only when one
is made.

The same calls that library makes (its REST transport is an ``AuthorizedSession`` too), with the
same credentials, timeout and retry (429/503, jittered), and a refusal raised as the same
``google.api_core`` exception (``from_http_response``, as that transport does), so every
diagnosis reads it as before. Answers are read into compute_views' typed values.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tpuwizard.core.cloud.compute.views import (
    Instance,
    InstanceGroupManager,
    InstanceTemplate,
    Named,
    ResizeRequest,
    ResourcePolicy,
    View,
    read,
)


@dataclass(frozen=True)
class Everywhere:
    """An aggregated list's answer: (scope, item) for each item, and the scopes not reached."""

    found: list[tuple[str, Any]]
    unreachable: dict[str, str]
    scopes: frozenset[str] = frozenset()  # every scope the answer named, with items or not


class ComputeReads:
    """Compute Engine's read calls for one project on one endpoint."""

    def __init__(
        self, endpoint: str, project: str, credentials: Any, timeout: float, retry: Any
    ) -> None:
        host = endpoint if "://" in endpoint else f"https://{endpoint}"  # as the client does
        self.base = f"{host.rstrip('/')}/compute/v1/projects/{quote(project, safe='')}"
        self.credentials = credentials
        self.timeout = timeout
        self.retry = retry
        self._session: Any = None
        self._lock = threading.Lock()

    # -- instances ---------------------------------------------------------------------------
    def instance(self, zone: str, name: str) -> Instance | None:
        return self._get_one(Instance, f"zones/{zone}/instances/{name}")

    def instances(self, zone: str, filter_: str = "") -> list[Instance]:
        return self._list(Instance, f"zones/{zone}/instances", filter_)

    def instances_everywhere(self, filter_: str = "") -> list[tuple[str, Instance]]:
        """Every zone's instances (one aggregated list), each with its scope ("zones/x")."""
        return [
            (scope, read(Instance, found))
            for scope, scoped in self._scopes("aggregated/instances", filter_)
            for found in scoped.get("instances") or ()
        ]

    def everywhere(self, kind: type[View], path: str, key: str, filter_: str = "") -> Everywhere:
        """One aggregated list (``aggregated/<path>``), every page: each scope's ``key`` items
        read as ``kind``, with their scope ("zones/Z", "regions/R", "global"); and the scopes
        Google could not reach (a scope's warning UNREACHABLE, or the list's ``unreachables``)
        with why: those were not checked, never empty. A scope with NO_RESULTS_ON_PAGE has none.
        (compute.v1.json's aggregated lists take no ``returnPartialSuccess``: a scope that cannot
        be read is reported in the answer, as above.)"""
        found: list[tuple[str, Any]] = []
        unreachable: dict[str, str] = {}
        scopes: set[str] = set()
        for page in self._pages(f"aggregated/{path}", filter_):
            for scope, scoped in (page.get("items") or {}).items():
                if not isinstance(scoped, dict):
                    continue
                scopes.add(str(scope))
                warning = scoped.get("warning") or {}
                if warning.get("code") == "UNREACHABLE":
                    unreachable[str(scope)] = str(warning.get("message") or "UNREACHABLE")
                found += [(str(scope), read(kind, item)) for item in scoped.get(key) or ()]
            for scope in page.get("unreachables") or ():
                unreachable.setdefault(str(scope), "unreachable")
        return Everywhere(found, unreachable, frozenset(scopes))

    # -- the catalog -------------------------------------------------------------------------
    def machine_types_everywhere(self, filter_: str = "") -> list[tuple[str, list[str]]]:
        """Each scope's machine type names (one aggregated list); NotFound where not served."""
        return [
            (scope, [read(Named, m).name for m in scoped.get("machineTypes") or ()])
            for scope, scoped in self._scopes("aggregated/machineTypes", filter_)
        ]

    def machine_types(self, zone: str) -> list[str]:
        return [m.name for m in self._list(Named, f"zones/{zone}/machineTypes")]

    def zones(self) -> list[str]:
        return [z.name for z in self._list(Named, "zones")]

    # -- a slice's parts ---------------------------------------------------------------------
    def mig(self, zone: str, name: str) -> InstanceGroupManager | None:
        return self._get_one(InstanceGroupManager, f"zones/{zone}/instanceGroupManagers/{name}")

    def migs(self, zone: str) -> list[InstanceGroupManager]:
        return self._list(InstanceGroupManager, f"zones/{zone}/instanceGroupManagers")

    def resize_requests(self, zone: str, mig: str) -> list[ResizeRequest]:
        """The MIG's resize requests; none when the MIG is gone (its requests go with it)."""
        from google.api_core import exceptions

        path = f"zones/{zone}/instanceGroupManagers/{mig}/resizeRequests"
        try:
            return self._list(ResizeRequest, path)
        except exceptions.NotFound:
            return []

    def template(self, region: str, name: str) -> InstanceTemplate | None:
        return self._get_one(InstanceTemplate, f"regions/{region}/instanceTemplates/{name}")

    def templates(self, region: str) -> list[InstanceTemplate]:
        return self._list(InstanceTemplate, f"regions/{region}/instanceTemplates")

    def policy(self, region: str, name: str) -> ResourcePolicy | None:
        return self._get_one(ResourcePolicy, f"regions/{region}/resourcePolicies/{name}")

    def policies(self, region: str) -> list[ResourcePolicy]:
        return self._list(ResourcePolicy, f"regions/{region}/resourcePolicies")

    # -- the calls ---------------------------------------------------------------------------
    def _get_one(self, kind: type[View], path: str) -> View | None:
        """One resource, None when Google says it is not there (404)."""
        from google.api_core import exceptions

        try:
            return read(kind, self.get(path))
        except exceptions.NotFound:
            return None

    def _list(self, kind: type[View], path: str, filter_: str = "") -> list[View]:
        pages = self._pages(path, filter_)
        return [read(kind, item) for page in pages for item in page.get("items") or ()]

    def _scopes(self, path: str, filter_: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """An aggregated list's scopes ("zones/x") with what each holds, over every page."""
        for page in self._pages(path, filter_):
            items = page.get("items") or {}
            yield from ((str(k), v) for k, v in items.items() if isinstance(v, dict))

    def _pages(self, path: str, filter_: str) -> Iterator[dict[str, Any]]:
        """Each page of a list, ``nextPageToken`` followed as the client's pagers do."""
        token = ""
        while True:
            params = {k: v for k, v in (("filter", filter_), ("pageToken", token)) if v}
            page = self.get(path, params)
            yield page
            token = str(page.get("nextPageToken") or "")
            if not token:
                return

    def get(self, path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        """One GET under the project, retried on 429/503; a refusal raised as the client
        library raises it."""
        url = f"{self.base}/{path}"

        def once() -> dict[str, Any]:
            from google.api_core import exceptions

            response = self.session.request("GET", url, params=params, timeout=self.timeout)
            if response.status_code >= 400:
                raise exceptions.from_http_response(response)
            body = response.json()
            return body if isinstance(body, dict) else {}

        return self.retry(once)() if self.retry is not None else once()

    @property
    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                from google.auth.transport.requests import AuthorizedSession

                self._session = AuthorizedSession(self.credentials)
            return self._session
