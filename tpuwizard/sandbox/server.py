"""The sandbox: a local stand-in for the Cloud TPU API on 127.0.0.1.

It speaks the REST paths that tpuwizard uses, in v2 and (for Flex-start queued resources)
v2alpha1, with long-running operations, Google-style error bodies and state kept on disk. The
real ``google-cloud-tpu`` client talks to it through ``TPUWIZARD_TPU_ENDPOINT`` with anonymous
credentials.
"""

from __future__ import annotations

import contextlib
import fcntl
import hmac
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from operator import attrgetter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tpuwizard.sandbox import google, iam_routes, locations, node_log, preflight_routes
from tpuwizard.sandbox.compute import batch as compute_batch
from tpuwizard.sandbox.compute import routes as compute_routes
from tpuwizard.sandbox.faults import ConnectionDropped, parse_faults, reset_connection
from tpuwizard.sandbox.injected import answer_lost, injected_error
from tpuwizard.sandbox.model import WORKERS_RE, ApiError, error_body, page, worker_locations
from tpuwizard.sandbox.serving import Answering, OpenConnections
from tpuwizard.sandbox.state import SandboxState
from tpuwizard.sandbox.tpu.gcloud_methods import ROUTES as GCLOUD_ROUTES
from tpuwizard.sandbox.tpu.gcloud_methods import GcloudMethods

LOOPBACK = "127.0.0.1"
PREFIX = r"^/(?P<version>v2|v2alpha1)/projects/(?P<project>[^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(PREFIX + p + "$"), handler)
    for m, p, handler in [
        ("GET", r"/locations", "list_locations"),
        ("GET", r"/locations/(?P<zone>[^/]+)", "get_location"),
        ("GET", r"/locations/(?P<zone>[^/]+)/acceleratorTypes", "list_accelerator_types"),
        ("GET", r"/locations/(?P<zone>[^/]+)/runtimeVersions", "list_runtime_versions"),
        ("GET", r"/locations/(?P<zone>[^/]+)/nodes", "list_nodes"),
        ("POST", r"/locations/(?P<zone>[^/]+)/nodes", "create_node"),
        ("GET", r"/locations/(?P<zone>[^/]+)/nodes/(?P<id>[^/:]+)", "get_node"),
        ("DELETE", r"/locations/(?P<zone>[^/]+)/nodes/(?P<id>[^/:]+)", "delete_node"),
        ("GET", r"/locations/(?P<zone>[^/]+)/queuedResources", "list_queued"),
        ("POST", r"/locations/(?P<zone>[^/]+)/queuedResources", "create_queued"),
        ("GET", r"/locations/(?P<zone>[^/]+)/queuedResources/(?P<id>[^/:]+)", "get_queued"),
        ("DELETE", r"/locations/(?P<zone>[^/]+)/queuedResources/(?P<id>[^/:]+)", "delete_queued"),
        ("GET", r"/locations/(?P<zone>[^/]+)/operations/(?P<id>[^/:]+)", "get_operation"),
    ]
] + GCLOUD_ROUTES
# google.rpc.Code's HTTP mapping, for the errors http.server answers by itself.
HTTP_STATUS = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 501: "UNIMPLEMENTED"}


def as_version(node: dict[str, Any], version: str) -> dict[str, Any]:
    """A node as ``version`` answers it: v2's Node has no ``autocheckpointEnabled`` (only
    v2alpha1's has), so v2 leaves it out."""
    if version == "v2alpha1":
        return node
    return {k: v for k, v in node.items() if k != "autocheckpointEnabled"}


class Handler(BaseHTTPRequestHandler):
    server: SandboxServer
    protocol_version = "HTTP/1.1"
    _status = 0  # the last answer's HTTP status, for the watchdog's log

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests and the wizard own the terminal

    def do_GET(self) -> None:
        with self.server.answering.one():
            self._dispatch("GET")
        self._note_watchdog("GET")

    def do_POST(self) -> None:
        with self.server.answering.one():
            try:  # fault reset_create (creates are POSTs): no answer, the connection reset
                self._dispatch("POST")
            except ConnectionDropped:
                self.close_connection = reset_connection(self.connection)

    def do_DELETE(self) -> None:
        with self.server.answering.one():
            self._dispatch("DELETE")
        self._note_watchdog("DELETE")

    def do_PATCH(self) -> None:
        with self.server.answering.one():
            self._dispatch("PATCH")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What http.server refuses itself (a verb no route has, a bad request line) is answered
        in Google's JSON error shape too, not its HTML page; the connection then closes."""
        self.close_connection = True
        status = HTTP_STATUS.get(code, "INTERNAL" if code >= 500 else "INVALID_ARGUMENT")
        asked = f": {self.command} {self.path}" if getattr(self, "command", None) else ""
        self._reply(code, error_body(code, status, f"{message or status}{asked}"))

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        faults = self.server.state.faults
        if faults.latency_ms:
            time.sleep(faults.latency_ms / 1000)
        if preflight_routes.serves(url.path):  # what the preflight reads, beside the TPU API
            state, check = self.server.state, self._authenticate
            quota_project = self.headers.get("x-goog-user-project")
            args = (state, method, url.path, url.query, raw, check, quota_project)
            self._reply(*preflight_routes.answer(*args))
            return
        if compute_batch.serves(url.path):  # several Compute Engine calls in one (gcloud's)
            kind = self.headers.get("Content-Type", "")
            state, check = self.server.state, self._authenticate
            self._send(*compute_batch.answer(state, method, kind, raw, check))
            return
        if compute_routes.serves(url.path):  # Compute Engine's, in its shape of errors
            state, check = self.server.state, self._authenticate
            self._reply(*compute_routes.answer(state, method, url.path, query, raw, check))
            return
        try:
            self._authenticate()
            body = json.loads(raw) if raw else {}
            injected = injected_error(faults, method, url.path, body)
            if injected:
                raise injected
            workers = WORKERS_RE.match(url.path)
            if workers and method == "GET":
                with self.server.state.store.transaction():
                    state = self.server.state
                    self._reply(
                        200,
                        worker_locations(state.home, state.data["nodes"], **workers.groupdict()),
                    )
                return
            for route_method, pattern, handler in ROUTES:
                match = pattern.match(url.path)
                if match and route_method == method:
                    with self.server.state.store.transaction():
                        self.server.state.tick()
                        result = attrgetter(handler)(self.server.api)(
                            query=query, body=body, **match.groupdict()
                        )
                    answer_lost(faults, handler)  # lost_create, reset_create: after a create
                    self._reply(200, result)
                    return
            answer = iam_routes.answer(faults, method, url.path, body)
            if answer is not None:
                self._reply(200, answer)
                return
            raise ApiError(404, "NOT_FOUND", f"No such method: {method} {url.path}")
        except ApiError as err:
            self._reply(err.http, error_body(err.http, err.status, err.message, err.details))
        except json.JSONDecodeError:
            self._reply(400, error_body(400, "INVALID_ARGUMENT", "The body is not JSON."))

    def _authenticate(self) -> None:
        """With a token, every request must carry it as a bearer token: anyone on this machine
        can reach 127.0.0.1, and a posted ssh-key lands in authorized_keys when paired with an
        sshd. Google answers a missing or wrong token with 401 UNAUTHENTICATED."""
        token = self.server.token
        if token is None:
            return
        sent = self.headers.get("Authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            raise ApiError(
                401,
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
            )

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, "application/json; charset=UTF-8", json.dumps(payload).encode())

    def _note_watchdog(self, method: str) -> None:
        """A watchdog's call, in its resource's log (node_log.py): which server answered what."""
        server = self.server
        served_by = f"pid {os.getpid()} port {server.server_address[1]}"

        def holds(resource: str) -> bool:
            with server.state.lock:
                data = server.state.data
                return resource in data["nodes"] or resource in data["queued"]

        agent = self.headers.get("User-Agent", "")
        path = urlsplit(self.path).path
        server.watchdog_calls.answered(agent, method, path, self._status, served_by, holds)

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Api:
    """One method per route; each returns the JSON to answer with."""

    def __init__(self, state: SandboxState) -> None:
        self.s = state
        self.gcloud = GcloudMethods(state)  # the routes only gcloud takes ("gcloud.NAME")

    def list_locations(self, version: str, project: str, query: dict, body: dict) -> dict:
        zones = [
            {"name": f"projects/{project}/locations/{z}", "locationId": z}
            for z in google.listed(locations.zones(), self.s.faults.ai_zones_visible)
        ]
        return page(zones, "locations", query)

    def get_location(self, version: str, project: str, zone: str, query: dict, body: dict) -> dict:
        locations.require_zone(project, zone)
        return {"name": f"projects/{project}/locations/{zone}", "locationId": zone}

    def list_accelerator_types(
        self, version: str, project: str, zone: str, query: dict, body: dict
    ) -> dict:
        locations.require_zone(project, zone)
        parent = f"projects/{project}/locations/{zone}"
        types = [
            dict(t, name=f"{parent}/acceleratorTypes/{t['type']}")
            for t in locations.accelerator_types(zone)
        ]
        return page(types, "acceleratorTypes", query)

    def list_runtime_versions(
        self, version: str, project: str, zone: str, query: dict, body: dict
    ) -> dict:
        locations.require_zone(project, zone)
        parent = f"projects/{project}/locations/{zone}"
        versions = [
            {"name": f"{parent}/runtimeVersions/{v}", "version": v}
            for v in locations.runtime_versions(zone)
        ]
        return page(versions, "runtimeVersions", query)

    def list_nodes(self, version: str, project: str, zone: str, query: dict, body: dict) -> dict:
        nodes = [as_version(n, version) for n in self.s.nodes.list_nodes(project, zone)]
        return page(nodes, "nodes", query)

    def create_node(self, version: str, project: str, zone: str, query: dict, body: dict) -> dict:
        return self.s.nodes.create_node(project, zone, query.get("nodeId", ""), body, version)

    def get_node(
        self,
        version: str,
        project: str,
        zone: str,
        id: str,
        query: dict,
        body: dict,
    ) -> dict:
        return as_version(self.s.nodes.get_node(project, zone, id), version)

    def delete_node(
        self,
        version: str,
        project: str,
        zone: str,
        id: str,
        query: dict,
        body: dict,
    ) -> dict:
        return self.s.nodes.delete_node(project, zone, id, version)

    def list_queued(self, version: str, project: str, zone: str, query: dict, body: dict) -> dict:
        return page(self.s.queued.list_queued(project, zone, version), "queuedResources", query)

    def create_queued(self, version: str, project: str, zone: str, query: dict, body: dict) -> dict:
        return self.s.queued.create_queued(
            project, zone, query.get("queuedResourceId", ""), body, version
        )

    def get_queued(
        self,
        version: str,
        project: str,
        zone: str,
        id: str,
        query: dict,
        body: dict,
    ) -> dict:
        return self.s.queued.get_queued(project, zone, id, version)

    def delete_queued(
        self,
        version: str,
        project: str,
        zone: str,
        id: str,
        query: dict,
        body: dict,
    ) -> dict:
        force = query.get("force", "").lower() in ("true", "1")
        return self.s.queued.delete_queued(project, zone, id, force, version)

    def get_operation(
        self,
        version: str,
        project: str,
        zone: str,
        id: str,
        query: dict,
        body: dict,
    ) -> dict:
        return self.s.operations.get_operation(
            f"projects/{project}/locations/{zone}/operations/{id}"
        )


# What writing to (or reading from) a client that closed its connection raises.
CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class SandboxServer(ThreadingHTTPServer):
    daemon_threads = True
    # A survey asks every zone's lists at once (about 60 requests); socketserver's backlog of 5
    # dropped the rest, and each client sent its connect again a second later.
    request_queue_size = 128

    def __init__(self, state: SandboxState, port: int = 0, token: str | None = None) -> None:
        self.state = state
        self.api = Api(state)
        self.token = token  # None: open (tests that build a server by hand); else required
        self.connections = OpenConnections()
        self.answering = Answering()
        self.watchdog_calls = node_log.WatchdogCalls(state.home)
        super().__init__((LOOPBACK, port), Handler)

    def get_request(self) -> tuple[Any, Any]:
        connection, address = super().get_request()
        self.connections.opened(connection)
        return connection, address

    def shutdown_request(self, request: Any) -> None:
        self.connections.closed(request)
        super().shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.connections.end_all()

    def stop_after_answers(self, wait_s: float = 10.0) -> None:
        """Stop serving for a hand-over: accept nothing new, let the answers being written
        finish (up to ``wait_s``), then close every connection. Closing at once also cut an
        answer being written, and one cut after its headers ended the watchdog that asked
        (IncompleteRead) before it retried every failed call. A call still waiting to be
        accepted is reset, before any answer: the caller tries again."""
        self.shutdown()
        self.answering.wait_until_none(wait_s)
        self.server_close()

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away before its answer (a poll given up, a process ended) is
        normal: say nothing on the user's terminal. Anything else is still reported."""
        if isinstance(sys.exc_info()[1], CLIENT_GONE):
            return
        super().handle_error(request, client_address)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        # Time moves even when nobody asks: a spot node is preempted and a Flex-start run ends
        # on time while the wizard is busy on the worker (or dead).
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(0.2):
                # A damaged state file stops the clock, not the server: each request says it.
                with contextlib.suppress(ApiError), self.state.store.transaction():
                    self.state.tick()

        ticker = threading.Thread(target=tick, name="tpuwizard-sandbox-clock", daemon=True)
        ticker.start()
        serving = self.state.store.serving_lock(fcntl.LOCK_SH)  # held while it serves its home
        try:
            super().serve_forever(poll_interval)
        finally:
            stop.set()
            os.close(serving)

    def switch_off(self) -> int:
        """``sandbox serve`` stopped: its nodes' VMs stop with it (see ``VirtualMachines``)."""
        return self.state.vms.switch_off()


def make_server(
    home: Path,
    port: int = 0,
    faults: str | None = None,
    delay: float = 1.0,
    authorized_keys: Path | None = None,
    ssh_port: int = 22,
    token: str | None = None,
) -> SandboxServer:
    """A sandbox on 127.0.0.1; with ``token``, requests without it as a bearer token get 401."""
    state = SandboxState(home, parse_faults(faults), delay, authorized_keys, ssh_port)
    return SandboxServer(state, port, token)
