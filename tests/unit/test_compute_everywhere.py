"""An aggregated list read as Compute Engine answers it (compute.v1.json's ``*AggregatedList``):
items keyed by scope over every page, a scope's NO_RESULTS_ON_PAGE warning as none, its
UNREACHABLE warning (or the list's ``unreachables``) as a scope not checked."""

from __future__ import annotations

from typing import Any

from tpuwizard.core.cloud.compute.rest import ComputeReads
from tpuwizard.core.cloud.compute.views import Instance


def warning(code: str, scope: str) -> dict[str, Any]:
    return {"warning": {"code": code, "message": f"{code} for {scope}", "data": []}}


PAGES = {
    "": {
        "items": {
            "zones/a-1": {"instances": [{"name": "x"}]},
            "zones/b-1": warning("NO_RESULTS_ON_PAGE", "zones/b-1"),
            "zones/c-1": warning("UNREACHABLE", "zones/c-1"),
        },
        "nextPageToken": "page2",
    },
    "page2": {
        "items": {"zones/a-1": {"instances": [{"name": "y"}]}},
        "unreachables": ["zones/d-1"],
    },
}


def test_every_page_is_read_and_an_unreachable_scope_is_not_checked(monkeypatch):
    reads = ComputeReads("http://127.0.0.1:1", "p", None, 5.0, None)
    asked: list[tuple[str, dict[str, str]]] = []

    def get(path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        asked.append((path, dict(params or {})))
        return PAGES[(params or {}).get("pageToken", "")]

    monkeypatch.setattr(reads, "get", get)
    answer = reads.everywhere(Instance, "instances", "instances", '(labels.a = "b")')
    assert [(scope, i.name) for scope, i in answer.found] == [
        ("zones/a-1", "x"),
        ("zones/a-1", "y"),
    ]
    assert sorted(answer.unreachable) == ["zones/c-1", "zones/d-1"]
    assert answer.unreachable["zones/c-1"] == "UNREACHABLE for zones/c-1"
    assert asked == [
        ("aggregated/instances", {"filter": '(labels.a = "b")'}),
        ("aggregated/instances", {"filter": '(labels.a = "b")', "pageToken": "page2"}),
    ]
