"""Each call tpuwizard makes with kaggle's client (whose requests carry no timeout) is waited
for a bounded time: one never answered fails as a call with no answer, not a hang."""

from __future__ import annotations

import threading
import time

import pytest

from tpuwizard.core.kaggle.client import bounded
from tpuwizard.core.kaggle.diagnosis import call_failed
from tpuwizard.core.kaggle.protocol import KaggleCallFailed


def test_a_call_never_answered_fails_after_its_bound_with_no_status():
    never = threading.Event()
    asked = time.monotonic()
    with pytest.raises(KaggleCallFailed) as failed:
        bounded("reading the kernel's status", 0.2, never.wait)
    assert time.monotonic() - asked < 5
    assert failed.value.status is None and failed.value.detail == "no answer within 0.2 s"
    never.set()


def test_an_answer_and_the_calls_own_error_come_back_as_they_are():
    assert bounded("x", 5, lambda: 42) == 42
    with pytest.raises(SystemExit):  # kaggle exits on refused credentials: still seen
        bounded("sign-in", 5, lambda: exit(1))


def test_no_answer_before_a_push_and_after_one_are_said_apart():
    before = call_failed("reading the weekly quota", "no answer within 1 s", None)
    assert before.kind == "kaggle_no_answer" and "Nothing was pushed" in before.explanation
    after = call_failed("pushing the kernel", "no answer within 1 s", None, "ada/tpuwizard-r1")
    assert "ada/tpuwizard-r1" in after.explanation and "Nothing was pushed" not in after.explanation
    assert "tpuwizard status" in str(after.next_steps[0])
