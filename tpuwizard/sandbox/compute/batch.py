"""Compute Engine's batch endpoint, ``POST /batch/compute/v1``: several calls in one request.

gcloud sends any command that names several resources (``instance-templates delete A B``,
``instances delete A B``) as one ``multipart/mixed`` request to ``batch/compute/v1`` on the
endpoint's host (its client_adapter._GetBatchUrl). Google's batch page
(compute/docs/api/how-tos/batch): each part is ``application/http`` holding one call (request
line, headers, body); the answer is ``multipart/mixed`` whose parts hold each call's HTTP answer,
with ``Content-ID: <response-ID>`` for the part's ``Content-ID: <ID>``. Each call is answered as
it would be alone (:func:`tpuwizard.sandbox.compute.routes.answer`), the bearer token checked
once, on the batch itself.
"""

from __future__ import annotations

import email.message
import email.parser
import json
import secrets
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from tpuwizard.sandbox.model import ApiError

if TYPE_CHECKING:
    from tpuwizard.sandbox.state import SandboxState

PATH = "/batch/compute/v1"
LIMIT = 1000  # Google's batch page: "up to 1000 calls in a single batch request"


def serves(path: str) -> bool:
    return path == PATH


def answer(
    state: SandboxState,
    method: str,
    content_type: str,
    raw: bytes,
    authenticate: Callable[[], None],
) -> tuple[int, str, bytes]:
    """(HTTP status, Content-Type, body) for one batch request."""
    from tpuwizard.sandbox.compute import routes as compute_routes

    try:
        authenticate()
        if method != "POST":
            raise ApiError(405, "httpMethodNotAllowed", f"Method {method} is not allowed here.")
        message = email.parser.BytesParser().parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        parts = message.get_payload() if message.is_multipart() else None
        if not isinstance(parts, list) or not parts:
            raise ApiError(400, "invalid", "A batch request is multipart/mixed, one call a part.")
        if len(parts) > LIMIT:
            raise ApiError(400, "invalid", f"A batch request holds at most {LIMIT} calls.")
    except ApiError as err:
        return err.http, "application/json; charset=UTF-8", _json(compute_routes.error_body(err))
    boundary = f"batch_{secrets.token_hex(12)}"
    out: list[str] = []
    for part in parts:
        if not isinstance(part, email.message.Message):
            continue  # not a part: nothing asked, nothing answered
        call_method, path, query, body = _call(part.get_payload())
        status, reply = compute_routes.answer(state, call_method, path, query, body, lambda: None)
        content_id = str(part.get("Content-ID", "<>")).strip()
        out.append(
            f"--{boundary}\r\nContent-Type: application/http\r\n"
            f"Content-ID: <response-{content_id[1:-1]}>\r\n\r\n"
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            "Content-Type: application/json; charset=UTF-8\r\n\r\n"
            f"{json.dumps(reply)}\r\n"
        )
    out.append(f"--{boundary}--\r\n")
    return 200, f"multipart/mixed; boundary={boundary}", "".join(out).encode()


def _call(text: object) -> tuple[str, str, dict[str, str], bytes]:
    """One ``application/http`` part -> (method, path, query, body)."""
    payload = text if isinstance(text, str) else ""
    request_line, _, rest = payload.replace("\r\n", "\n").partition("\n")
    words = request_line.split()
    method, target = (words[0], words[1]) if len(words) >= 2 else ("GET", "/")
    _, _, body = rest.partition("\n\n")
    url = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    return method, url.path, query, body.strip().encode()


def _json(payload: object) -> bytes:
    return json.dumps(payload).encode()
