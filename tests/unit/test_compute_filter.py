"""The sandbox's Compute Engine list filter: the grammar compute.v1.json describes, a 400 for what
Google refuses, and an honest 400 for OR, which the sandbox does not speak."""

from __future__ import annotations

import pytest

from tpuwizard.sandbox.compute.list_filter import matches, parse_filter
from tpuwizard.sandbox.model import ApiError

VM = {
    "name": "tpu-run-1",
    "status": "RUNNING",
    "labels": {"managed-by": "tpuwizard", "owner": "ana"},
    "scheduling": {"automaticRestart": False, "provisioningModel": "SPOT"},
    "tags": {"items": ["a", "b"]},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", True),
        ("labels.managed-by=tpuwizard", True),
        ("labels.managed-by = someone", False),
        ('labels.owner = "ana"', True),
        ("labels.owner != ana", False),
        ("labels.owner:*", True),
        ("labels.missing:*", False),
        ("(labels.managed-by = tpuwizard) (status = RUNNING)", True),
        ("(labels.managed-by = tpuwizard) AND (status = STOPPED)", False),
        ("labels.owner = ana AND status = RUNNING", True),
        ("scheduling.automaticRestart = false", True),
        ("tags.items:b", True),
        ("name eq tpu-.*", True),
        ("name eq run", False),  # a regular expression matches the whole field
        ("name ne '.*-1'", False),
        ('(name eq "tpu-.*") (status eq RUN.*)', True),
    ],
)
def test_the_filter_selects_as_compute_engine_describes(text, expected):
    assert matches(parse_filter(text), VM) is expected


@pytest.mark.parametrize(
    "text",
    ["labels.owner =", "labels.owner ~ ana", "(status = RUNNING", 'name = "x', "a = b c = d"],
)
def test_a_filter_google_would_refuse_is_a_400(text):
    with pytest.raises(ApiError) as refused:
        parse_filter(text)
    assert refused.value.http == 400
    assert refused.value.message.startswith(f"Invalid value for field 'filter': '{text}'.")


def test_regular_expressions_and_aip_160_cannot_be_mixed():
    with pytest.raises(ApiError, match="cannot be mixed"):
        parse_filter("(name eq tpu-.*) (status = RUNNING)")


def test_or_is_refused_with_a_reason_never_ignored():
    with pytest.raises(ApiError, match="does not support OR"):
        parse_filter("(status = RUNNING) OR (status = STOPPED)")
