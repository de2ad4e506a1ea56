"""Why a kept node no tpuwizard command deleted is gone (issue 52, item 2): the limit that passed
first before it was seen gone, a preemption the listing showed, else outside tpuwizard; never a
limit whose time had not come."""

from __future__ import annotations

import pytest

from tpuwizard.core.launch.kept.end_reason import (
    EndReason,
    GoneEvidence,
    end_reason,
    limit_passed_at,
)
from tpuwizard.words.teardown_text import end_reason_words

KEPT_AT = 1_000_000.0
MIN = 60.0


def evidence(seen_after_min, idle_min=None, max_run_min=None, beat_after_min=None, preempted=False):
    return GoneEvidence(
        kept_at=KEPT_AT,
        idle_s=idle_min * MIN if idle_min is not None else None,
        max_deadline=KEPT_AT + max_run_min * MIN if max_run_min is not None else None,
        last_heartbeat=KEPT_AT + beat_after_min * MIN if beat_after_min is not None else None,
        seen_gone_at=KEPT_AT + seen_after_min * MIN,
        preempted=preempted,
    )


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # newcomer round 6, D1: idle 0.2 min, deadline 120 min, seen gone after a minute
        (evidence(1, idle_min=0.2, max_run_min=120), EndReason.IDLE),
        (evidence(31, idle_min=30), EndReason.IDLE),
        # the heartbeats moved the idle limit past the --max-run deadline: the deadline ended it
        (evidence(61, idle_min=30, max_run_min=60, beat_after_min=50), EndReason.MAX_RUN),
        (evidence(61, max_run_min=60), EndReason.MAX_RUN),
        # neither limit's time had come: not the watchdog
        (evidence(10, idle_min=30, max_run_min=60), EndReason.OUTSIDE),
        (evidence(40, idle_min=30, beat_after_min=20), EndReason.OUTSIDE),
        (evidence(5), EndReason.OUTSIDE),  # no limit at all
        # a preemption the listing showed wins over any limit
        (evidence(90, idle_min=30, max_run_min=60, preempted=True), EndReason.PREEMPTED),
        (evidence(1, idle_min=30, preempted=True), EndReason.PREEMPTED),
        # both passed: the one that came first
        (evidence(200, idle_min=30, max_run_min=120), EndReason.IDLE),
        (evidence(200, idle_min=30, max_run_min=20), EndReason.MAX_RUN),
    ],
)
def test_the_end_reason_is_the_limit_the_evidence_times_support(case, expected):
    assert end_reason(case) == expected


def test_each_reason_names_its_limit_in_words():
    idle = evidence(1, idle_min=0.2, max_run_min=120)
    assert end_reason_words(EndReason.IDLE, idle) == "its watchdog, after 0.2 minutes without a run"
    max_run = evidence(61, max_run_min=60)
    said = end_reason_words(EndReason.MAX_RUN, max_run)
    assert said.startswith("its --max-run deadline at ") and "passed" in said
    assert "preempted" in end_reason_words(EndReason.PREEMPTED, idle)
    assert end_reason_words(EndReason.OUTSIDE, idle) == "deleted outside tpuwizard (or by Google)"


@pytest.mark.parametrize(
    ("case", "reason", "passed_after_min"),
    [
        (evidence(1, idle_min=0.2, max_run_min=120), EndReason.IDLE, 0.2),
        # the idle limit counts from the last heartbeat, not from the keep
        (evidence(61, idle_min=5, max_run_min=90, beat_after_min=50), EndReason.IDLE, 55),
        (evidence(61, idle_min=30, max_run_min=60, beat_after_min=50), EndReason.MAX_RUN, 60),
        (evidence(90, idle_min=30, preempted=True), EndReason.PREEMPTED, None),
        (evidence(10, idle_min=30, max_run_min=60), EndReason.OUTSIDE, None),
    ],
)
def test_the_run_folder_records_when_the_limit_of_its_reason_passed(case, reason, passed_after_min):
    """outcome.json holds the time beside the reason, so the folder alone says "its --max-run
    deadline at HH:MM passed"."""
    assert end_reason(case) == reason
    at = limit_passed_at(case, reason)
    assert at == (None if passed_after_min is None else KEPT_AT + passed_after_min * MIN)
