"""Google's name rules (core/cloud/names.py), written with string methods for the start path,
held against the same rules written as regular expressions: the patterns as Google states them,
matched whole."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpuwizard.core.cloud.names import is_project_id, is_resource_name, is_zone

PATTERNS: list[tuple[Callable[[str], bool], re.Pattern[str]]] = [
    (is_project_id, re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]")),
    (is_zone, re.compile(r"[a-z]+-[a-z]+[0-9]+-([a-z]|ai[0-9]+[a-z]?)")),
    (is_resource_name, re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")),
]
# Pieces a zone, a project and a name are made of, and what none may hold.
PIECES = st.sampled_from(
    [
        *("us", "central", "europe", "west", "1", "4", "a", "b", "ai", "ai1", "-", "-", "z9"),
        *("x", "A", "_", " ", "\n", "é", "٣", ""),
    ]
)


@pytest.mark.parametrize(
    ("rule", "text", "valid"),
    [
        (is_zone, "us-central1-a", True),
        (is_zone, "us-central1-ai1a", True),
        (is_zone, "us-central1-ai1", True),
        (is_zone, "us-central1-ai", False),
        (is_zone, "us-central1-ab", False),
        (is_zone, "us-central-a", False),
        (is_zone, "us-central1-a\n", False),
        (is_zone, "us-central١-a", False),  # an Arabic-Indic digit is no digit here
        (is_zone, "", False),
        (is_project_id, "my-proj", True),
        (is_project_id, "abcde", False),  # five: one short
        (is_project_id, "a" * 30, True),
        (is_project_id, "a" * 31, False),
        (is_project_id, "my-proj-", False),
        (is_project_id, "1project", False),
        (is_resource_name, "a", True),
        (is_resource_name, "a" * 63, True),
        (is_resource_name, "a" * 64, False),
        (is_resource_name, "tpu-", False),
        (is_resource_name, "Tpu", False),
        (is_resource_name, "", False),
    ],
)
def test_each_rule_on_the_names_users_type(
    rule: Callable[[str], bool], text: str, valid: bool
) -> None:
    assert rule(text) is valid


# Any run of pieces, and runs joined by hyphens as a zone is (the shapes near the rules' edges).
TEXTS = st.lists(PIECES, max_size=8).map("".join) | st.lists(
    st.lists(PIECES, max_size=3).map("".join), min_size=1, max_size=4
).map("-".join)


@settings(max_examples=1000, deadline=None)
@given(TEXTS, st.integers(0, 2))
def test_each_rule_agrees_with_its_pattern(text: str, which: int) -> None:
    rule, pattern = PATTERNS[which]
    assert rule(text) is (pattern.fullmatch(text) is not None), text


def test_every_zone_shape_agrees_with_the_pattern() -> None:
    """Each part of a zone, right and wrong, in every combination."""
    areas = ["us", "europe", "", "u1", "Us", "é"]
    places = ["central1", "west42", "central", "1", "central1a", "c1", "central1\n"]
    ends = ["a", "b", "ab", "", "1", "a1", "ai", "ai1", "ai1a", "ai1ab", "ai12", "aia", "ai٣"]
    pattern = PATTERNS[1][1]
    for area, place, end in itertools.product(areas, places, ends):
        for text in (f"{area}-{place}-{end}", f"{area}-{place}{end}", f"{area}-{place}-{end}-a"):
            assert is_zone(text) is (pattern.fullmatch(text) is not None), text


@pytest.mark.parametrize("length", [0, 1, 5, 6, 29, 30, 31, 62, 63, 64])
def test_the_length_limits_agree_with_the_patterns(length: int) -> None:
    for text in ("a" * length, "a" + "-" * max(length - 2, 0) + "1"):
        for rule, pattern in PATTERNS:
            assert rule(text) is (pattern.fullmatch(text) is not None), (text, rule)
