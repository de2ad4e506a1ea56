"""The course report's platform check names the rule that failed: a practice report that
asked for cpu and ran on cpu agrees with itself; it is --expect tpu that it does not meet."""

from __future__ import annotations

from tpuwizard.core.evidence.course_report import CourseReport, check_course_report
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.fit import plan, verdict

PREDICTION = [0.34375, 0.8125, 1.28125, 1.75, 2.21875, 2.6875, 3.15625, 3.625]


def report(platform: str, expected: str) -> CourseReport:
    record = {"platform": platform, "expected": expected, "shape": [8], "dtype": "float32"}
    return CourseReport(record, PREDICTION)


def test_a_practice_report_under_expect_tpu_is_refused_for_not_being_tpu():
    check = check_course_report([report("cpu", "cpu")], "tpu")
    [problem] = [p for p in check.problems if "platform" in p]
    assert "it is not the 'tpu' that --expect requires" in problem
    assert "disagree" not in problem


def test_a_report_that_fell_back_is_refused_for_its_platforms_disagreeing():
    check = check_course_report([report("cpu", "tpu")], None)
    [problem] = [p for p in check.problems if "platform" in p]
    assert "requested and observed platforms disagree" in problem


def test_a_state_no_slice_holds_is_told_what_to_change_without_naming_a_recipe():
    from tpuwizard.core.handover.larger import verdict_with_larger

    listed = plan(1e7, [catalog.parse_accelerator("v5litepod-4")])
    assert verdict(1e7, listed).startswith("None of the slices above holds")
    words = verdict_with_larger(1e7, listed)  # fit's words: no single slice holds it
    assert words.startswith("No single slice in tpuwizard's catalog holds")
    assert "recipe" not in words and "make the state smaller" in words
