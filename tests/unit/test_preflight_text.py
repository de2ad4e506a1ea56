"""The Account step's preflight count says it is the project's checks alone (issue 55.7): the
CLI's `preflight` and Create add the slice's quota and the zone's offer, so their counts differ."""

from __future__ import annotations

import pytest

from tpuwizard.core.preflight.model import Check, Verdict
from tpuwizard.words.preflight_text import project_preflight_words

WHY = "(quota, zone: at Create)"


@pytest.mark.parametrize(
    ("verdicts", "head"),
    [
        ([Verdict.PASS] * 5, "Project preflight of p-1: 5 PASS"),
        ([Verdict.PASS, Verdict.UNKNOWN], "Project preflight of p-1: 1 PASS, 1 UNKNOWN"),
        ([Verdict.FAIL, Verdict.PASS], "Project preflight of p-1: 1 PASS, 1 FAIL"),
    ],
)
def test_the_count_says_which_checks_it_counts(verdicts: list[Verdict], head: str) -> None:
    checks = [Check(f"c{i}", v, "detail", "fix it" if v is Verdict.FAIL else None)
              for i, v in enumerate(verdicts)]  # fmt: skip
    first, *rest = project_preflight_words("p-1", checks).split("\n")
    assert first == f"{head} {WHY}"
    assert len(rest) == verdicts.count(Verdict.FAIL) and all("fix it" in r for r in rest)
