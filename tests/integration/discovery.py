"""Checking JSON against Google's discovery documents: the Cloud TPU API (v1, v2, v2alpha1) and
Compute Engine (v1).

The documents are the ones google-api-python-client ships (``discovery_cache/documents``):
Google's own description of every method, its path, its parameters, and the schema of every
request and response body. A field the schema does not name, a value of the wrong type, a
duration or an int64 in the wrong form, an enum value Google does not list: each is an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any

DURATION = re.compile(r"^-?\d+(\.\d{1,9})?s$")
INT64 = re.compile(r"^-?\d+$")


def document(version: str, api: str = "tpu") -> dict[str, Any]:
    folder = resources.files("googleapiclient.discovery_cache").joinpath("documents")
    return json.loads(folder.joinpath(f"{api}.{version}.json").read_text("utf-8"))


@dataclass(frozen=True)
class Method:
    id: str
    http: str
    path: re.Pattern[str]
    parameters: frozenset[str]
    request: str | None
    response: str | None


def methods(doc: dict[str, Any]) -> list[Method]:
    """Every method of the document, with its flat path as a pattern."""
    found: list[Method] = []
    standard = frozenset(doc.get("parameters", {}))
    service = doc.get("servicePath", "")  # "compute/v1/"; the TPU API's paths carry their version

    def walk(resource: dict[str, Any]) -> None:
        for method in resource.get("methods", {}).values():
            flat = "/" + service + method.get("flatPath", method["path"])
            pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/:]+", flat) + "$")
            found.append(
                Method(
                    method["id"],
                    method["httpMethod"],
                    pattern,
                    standard | frozenset(method.get("parameters", {})),
                    method.get("request", {}).get("$ref"),
                    method.get("response", {}).get("$ref"),
                )
            )
        for child in resource.get("resources", {}).values():
            walk(child)

    walk(doc)
    return found


_METHODS: dict[tuple[str, str], list[Method]] = {}


def find_method(doc: dict[str, Any], http: str, path: str) -> Method | None:
    # Each document's methods are read once (Compute Engine's has hundreds, each a pattern).
    key = (str(doc.get("id")), str(doc.get("revision")))
    if key not in _METHODS:
        _METHODS[key] = methods(doc)
    # Literal paths (.../nodes/{id}:getGuestAttributes) are tried before the general ones.
    candidates = [m for m in _METHODS[key] if m.http == http and m.path.match(path)]
    return min(candidates, key=lambda m: m.path.pattern.count("[^/:]+"), default=None)


def errors(doc: dict[str, Any], schema: dict[str, Any], value: Any, at: str = "$") -> list[str]:
    """What in ``value`` breaks ``schema`` (a discovery schema or a ``$ref`` to one)."""
    if "$ref" in schema:
        return errors(doc, doc["schemas"][schema["$ref"]], value, at)
    kind = schema.get("type")
    if kind == "any" or kind is None:
        return []
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{at}: expected an object, got {value!r}"]
        out: list[str] = []
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in properties:
                out += errors(doc, properties[key], item, f"{at}.{key}")
            elif extra is not None:
                out += errors(doc, extra, item, f"{at}.{key}")
            else:
                out.append(f"{at}: field '{key}' is not in schema {schema.get('id', '?')}")
        return out
    if kind == "array":
        if not isinstance(value, list):
            return [f"{at}: expected an array, got {value!r}"]
        return [
            e
            for i, item in enumerate(value)
            for e in errors(doc, schema["items"], item, f"{at}[{i}]")
        ]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{at}: expected a boolean, got {value!r}"]
    if kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{at}: expected an integer, got {value!r}"]
    if kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{at}: expected a number, got {value!r}"]
    if kind == "string":
        return _string_errors(schema, value, at)
    return [f"{at}: unknown schema type {kind}"]


def _string_errors(schema: dict[str, Any], value: Any, at: str) -> list[str]:
    if not isinstance(value, str):
        return [f"{at}: expected a string, got {value!r}"]
    fmt = schema.get("format")
    if fmt in ("int64", "uint64") and not INT64.match(value):
        return [f"{at}: {value!r} is not an {fmt} in JSON (a string of digits)"]
    if fmt == "google-duration" and not DURATION.match(value):
        return [f"{at}: {value!r} is not a duration such as '3600s'"]
    if fmt == "google-datetime":
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return [f"{at}: {value!r} is not an RFC 3339 time"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{at}: {value!r} is not one of {schema['enum']}"]
    return []


# (method, path, query, request body, HTTP status, reply) of one call the sandbox answered.
Call = tuple[str, str, dict[str, str], Any, int, dict[str, Any]]


def record_traffic(monkeypatch: Any) -> list[Call]:
    """Every call the sandbox answers from now on, recorded at its HTTP handler (with pytest's
    ``monkeypatch``, so the recording ends with the test)."""
    import io
    from urllib.parse import parse_qs, urlsplit

    from tpuwizard.sandbox import server as sandbox_server

    seen: list[Call] = []
    dispatch, reply = sandbox_server.Handler._dispatch, sandbox_server.Handler._reply

    def recording_dispatch(self: Any, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        connection, self.rfile = self.rfile, io.BytesIO(raw)  # the handler reads the same bytes
        self._recorded = (method, raw)
        try:
            dispatch(self, method)
        finally:
            self.rfile = connection  # the next request on this connection comes from here

    def recording_reply(self: Any, status: int, payload: dict[str, Any]) -> None:
        method, raw = self._recorded
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        body = json.loads(raw) if raw else None
        seen.append((method, url.path, query, body, status, payload))
        reply(self, status, payload)

    monkeypatch.setattr(sandbox_server.Handler, "_dispatch", recording_dispatch)
    monkeypatch.setattr(sandbox_server.Handler, "_reply", recording_reply)
    return seen
