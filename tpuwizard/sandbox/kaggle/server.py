"""The Kaggle stand-in: Kaggle's API on 127.0.0.1, as kaggle 2.2.5 and kagglesdk 0.1.38 call it.

kaggle reaches a local server only with ``KAGGLE_API_ENVIRONMENT=LOCALHOST`` (read when it is
imported): ``http://localhost/api/v1/<service>/<method>``, POSTed JSON in kagglesdk's camelCase
field names, on port 80. The stand-in listens on a free port and is reached as the client's
HTTP proxy (``HTTP_PROXY``), so the request line carries the whole ``http://localhost/...`` URL;
plain paths are answered too. Nothing patches the client.

Served: sign-in (``IntrospectToken``), ``SaveKernel`` (the push), ``GetKernelSessionStatus``,
``GetKernel`` (metadata, with a pinned image under the ``pinned`` fault),
``ListKernelSessionOutput`` with download URLs, ``GetAcceleratorQuotaStatistics``, and the log
stream kaggle 2.2.5 reads (``GET /api/v1/kernels/logs/stream/<owner>/<slug>``: server-sent
events while the session runs, ending with ``END_OF_LOG``; a JSON list once it ended).
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from tpuwizard.sandbox.faults import reset_connection
from tpuwizard.sandbox.kaggle.sessions import (
    PINNED_IMAGE,
    TPU_HOURS_PER_WEEK,
    UNVERIFIED_WORDS,
    KernelSessions,
    Session,
    parse_kaggle_faults,
)
from tpuwizard.sandbox.serving import start_in_thread

LOOPBACK = "127.0.0.1"
KERNELS = "/api/v1/kernels.KernelsApiService/"
LOG_STREAM = "/api/v1/kernels/logs/stream/"
OUTPUT = "/sandbox-output/"


def quota_statistics(faults: dict[str, str]) -> dict[str, Any]:
    """The stand-in's answer to ``GetAcceleratorQuotaStatistics``, in kagglesdk's JSON shape
    (``ApiGetAcceleratorQuotaStatisticsResponse``: durations as ``"<seconds>s"``)."""
    allowed = TPU_HOURS_PER_WEEK * 3600
    used = allowed if "quota_exhausted" in faults else 0.0
    refresh = datetime.now(UTC).replace(tzinfo=None) + timedelta(days=3)
    return {
        "quotaRefreshTime": refresh.isoformat(timespec="milliseconds") + "Z",
        "tpuQuota": {"timeUsed": f"{used:.0f}s", "totalTimeAllowed": f"{allowed:.0f}s"},
        "gpuQuota": {"timeUsed": "0s", "totalTimeAllowed": "108000s"},
    }


class KaggleHandler(BaseHTTPRequestHandler):
    server: KaggleStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the terminal is the command's

    def _path(self) -> str:
        return unquote(urlsplit(self.path).path)  # a proxy request's line holds the whole URL

    def _user(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        if auth == f"Bearer {self.server.token}":
            return self.server.username
        if auth.startswith("Basic "):
            user, _, key = base64.b64decode(auth[6:]).decode(errors="replace").partition(":")
            if key == self.server.token:
                return user
        return None

    def _answer(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if newer := self.server.faults.get("newer_client"):  # kaggle then says it is outdated
            self.send_header("X-Kaggle-APIVersion", newer)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        path = self._path()
        self.server.calls.append(path)
        if self._dropped(path) or self._held(path):
            return
        if path == "/api/v1/security.OAuthService/IntrospectToken":
            active = body.get("token") == self.server.token
            self._answer(
                200, {"active": active, "username": self.server.username if active else ""}
            )
            return
        user = self._user()
        if user is None:
            self._answer(401, {"code": 401, "message": "Unauthenticated"})
            return
        if not path.startswith(KERNELS):
            self._answer(404, {"code": 404, "message": f"no such method: {path}"})
            return
        method = getattr(self, "kernels_" + path[len(KERNELS) :], None)
        if method is None:
            self._answer(404, {"code": 404, "message": f"no such method: {path}"})
            return
        status, answer = method(user, body)
        if path.endswith("/SaveKernel") and "slow_push" in self.server.faults:
            time.sleep(float(self.server.faults["slow_push"] or 30))  # Kaggle still answering
        if path.endswith("/SaveKernel") and "lose_push" in self.server.faults:
            # The push landed, and its answer is lost on the way back: a reset, no answer.
            self.server.faults.pop("lose_push")
            self.close_connection = reset_connection(self.connection)
            return
        self._answer(status, answer)

    def _dropped(self, path: str) -> bool:
        """``drop_after=N``: after N status answers the network drops; every later request is
        reset, as a connection lost mid-wait."""
        if "drop_after" not in self.server.faults:
            return False
        if path.endswith("/GetKernelSessionStatus"):
            self.server.status_answers += 1
        if self.server.status_answers <= int(self.server.faults["drop_after"] or 1):
            return False
        self.close_connection = reset_connection(self.connection)
        return True

    def _held(self, path: str) -> bool:
        """``hang=M1,M2`` (or ``hang`` alone: every call): a request for one of those methods
        (the path's last part) is accepted and never answered, until the stand-in ends."""
        if "hang" not in self.server.faults:
            return False
        methods = [m for m in self.server.faults["hang"].split(",") if m]
        if methods and path.rsplit("/", 1)[-1] not in methods:
            return False
        self.server.held_open += 1
        self.server.switched_off.wait()
        self.close_connection = True
        return True

    def _session(self, body: dict[str, Any]) -> Session | None:
        slug = f"{body.get('userName', '')}/{body.get('kernelSlug', '')}"
        return self.server.sessions.latest.get(slug)

    def kernels_SaveKernel(self, user: str, body: dict[str, Any]) -> tuple[int, Any]:
        self.server.pushes.append(body)
        if "unverified" in self.server.faults:
            return 200, {"error": UNVERIFIED_WORDS}
        slug = str(body.get("slug") or "")
        if slug.split("/")[0] != user:
            return 403, {"code": 403, "message": "Permission 'kernels.create' was denied"}
        session = self.server.sessions.push(
            slug,
            str(body.get("text") or ""),
            body.get("sessionTimeoutSeconds"),
            str(body.get("machineShape") or ""),
        )
        return 200, {
            "ref": f"/code/{slug}",
            "url": f"http://localhost/code/{slug}",
            "versionNumber": session.version,
            "kernelId": abs(hash(slug)) % 10**6,
        }

    def kernels_DeleteKernel(self, user: str, body: dict[str, Any]) -> tuple[int, Any]:
        session = self._session(body)
        if session is None:
            return 404, {"code": 404, "message": "Kernel not found"}
        if not session.ended.is_set():  # what Kaggle does to a running one is not known here
            return 400, {"code": 400, "message": "the sandbox deletes only ended kernels"}
        del self.server.sessions.latest[session.slug]
        return 200, {}

    def kernels_GetKernelSessionStatus(self, user: str, body: dict[str, Any]) -> tuple[int, Any]:
        session = self._session(body)
        if session is None:
            return 404, {"code": 404, "message": "Kernel not found"}
        answer: dict[str, Any] = {"status": session.state}
        if session.failure:
            answer["failureMessage"] = session.failure
        return 200, answer

    def kernels_GetKernel(self, user: str, body: dict[str, Any]) -> tuple[int, Any]:
        session = self._session(body)
        if session is None:
            return 404, {"code": 404, "message": "Kernel not found"}
        metadata: dict[str, Any] = {
            "ref": session.slug,
            "slug": session.slug.split("/")[1],
            "author": user,
            "isPrivate": True,
            "enableTpu": True,
            "machineShape": session.shape,
            "currentVersionNumber": session.version,
        }
        if "pinned" in self.server.faults:
            metadata["dockerImage"] = PINNED_IMAGE
        return 200, {"metadata": metadata}

    def kernels_ListKernelSessionOutput(self, user: str, body: dict[str, Any]) -> tuple[int, Any]:
        session = self._session(body)
        if session is None:
            return 404, {"code": 404, "message": "Kernel not found"}
        files = [
            {"fileName": name, "url": f"http://localhost{OUTPUT}{session.slug}/{name}"}
            for name in self.server.sessions.output_files(session)
        ]
        return 200, {"files": files, "log": "\n".join(session.lines) + "\n"}

    def kernels_GetAcceleratorQuotaStatistics(self, user: str, body: Any) -> tuple[int, Any]:
        return 200, quota_statistics(self.server.faults)

    def do_GET(self) -> None:
        path = self._path()
        self.server.calls.append(path)
        if self._dropped(path) or self._held(path):
            return
        if path.startswith(OUTPUT):
            owner, name, rest = path[len(OUTPUT) :].split("/", 2)
            session = self.server.sessions.latest.get(f"{owner}/{name}")
            file = session.folder / "working" / rest if session else None
            if file is None or ".." in rest.split("/") or not file.is_file():
                self._answer(404, {"code": 404, "message": "not found"})
                return
            self._answer(200, file.read_bytes(), "application/octet-stream")
            return
        if self._user() is None:
            self._answer(401, {"code": 401, "message": "Unauthenticated"})
            return
        if path.startswith(LOG_STREAM):
            session = self.server.sessions.latest.get(path[len(LOG_STREAM) :])
            if session is None:
                self._answer(404, {"code": 404, "message": "Kernel not found"})
            elif session.ended.is_set():
                blob = [{"stream_name": "stdout", "data": line + "\n"} for line in session.lines]
                self._answer(200, blob)
            else:
                self._stream(session)
            return
        self._answer(404, {"code": 404, "message": f"no such path: {path}"})

    def _stream(self, session: Session) -> None:
        """Server-sent events, one per log line as it comes, then the end sentinel."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        sent = 0
        while True:
            ended = session.ended.is_set()
            for line in session.lines[sent:]:
                event = {"stream_name": "stdout", "time": time.time(), "data": line + "\n"}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                sent += 1
            self.wfile.flush()
            if ended and sent >= len(session.lines):
                break
            session.ended.wait(0.1)
        self.wfile.write(b"data: END_OF_LOG\n\n")
        self.wfile.flush()


class KaggleStandIn(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state_dir: Path, faults: str | None, username: str, token: str) -> None:
        super().__init__((LOOPBACK, 0), KaggleHandler)
        self.faults = parse_kaggle_faults(faults)
        self.sessions = KernelSessions(state_dir, self.faults)
        self.username, self.token = username, token
        self.pushes: list[dict[str, Any]] = []  # each SaveKernel body, for tests to read
        self.calls: list[str] = []  # each request's path, for tests to read
        self.status_answers = 0  # for drop_after
        self.held_open = 0  # requests held open without an answer (hang), for tests to read
        self.switched_off = threading.Event()  # ends the requests held open

    @property
    def proxy(self) -> str:
        return f"http://{LOOPBACK}:{self.server_address[1]}"

    def switch_off(self) -> None:
        self.switched_off.set()
        self.shutdown()
        self.server_close()
        self.sessions.stop_all()


def start_kaggle_stand_in(
    state_dir: Path, faults: str | None = None, username: str = "practice-user"
) -> KaggleStandIn:
    """The stand-in serving from a daemon thread, with a fresh token as the user's secret."""
    server = KaggleStandIn(state_dir, faults, username, secrets.token_hex(16))
    start_in_thread(server)
    return server
