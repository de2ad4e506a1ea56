"""How the preflight's checks run: all at once, in a fixed order, and never with a traceback (an
exception or a check that does not answer in time is UNKNOWN, saying why)."""

import threading

from tests.unit.fake_rest import ask, reach
from tpuwizard.core.preflight import network, offer, quota
from tpuwizard.core.preflight.model import Check, CheckJob, Verdict, in_parallel, passed, run_checks
from tpuwizard.core.preflight.run import jobs_for


def test_checks_run_concurrently():
    # Each job waits for all the others at a barrier: run one after another, they would break it.
    barrier = threading.Barrier(4, timeout=10)

    def job(i: int) -> Check:
        barrier.wait()
        return passed(f"c{i}", "met the others")

    checks = run_checks([CheckJob(f"c{i}", lambda i=i: job(i)) for i in range(4)])
    assert [c.name for c in checks] == ["c0", "c1", "c2", "c3"]
    assert all(c.verdict is Verdict.PASS for c in checks)


def test_an_exception_is_unknown_with_its_words():
    def boom() -> Check:
        raise ConnectionError("no route to host")

    (check,) = run_checks([CheckJob("Billing", boom)])
    assert check.verdict is Verdict.UNKNOWN and check.name == "Billing"
    assert "no route to host" in check.detail


def test_a_check_that_does_not_answer_in_time_is_unknown():
    release = threading.Event()

    def stuck() -> Check:
        release.wait(30)
        return passed("Quota", "late")

    try:
        (check,) = run_checks([CheckJob("Quota", stuck)], timeout=0.05)
    finally:
        release.set()
    assert check.verdict is Verdict.UNKNOWN and "no answer within" in check.detail


def test_in_parallel_keeps_the_order_of_the_calls():
    barrier = threading.Barrier(3, timeout=10)

    def call(i: int) -> int:
        barrier.wait()
        return i

    assert in_parallel(*[lambda i=i: call(i) for i in range(3)]) == [0, 1, 2]


def test_a_check_line_says_verdict_name_detail_and_fix():
    line = Check("Billing", Verdict.FAIL, "no billing account", "gcloud billing ...").line()
    assert line.startswith("FAIL") and "Billing: no billing account." in line
    assert line.endswith("Fix: gcloud billing ...")


def test_which_checks_apply():
    names = [j.name for j in jobs_for(ask(), reach(None))]
    assert quota.NAME in names and offer.NAME in names and network.EXTERNAL in names
    internal = [j.name for j in jobs_for(ask(internal_ips=True), reach(None))]
    assert network.INTERNAL in internal and network.EXTERNAL not in internal
    project_only = [j.name for j in jobs_for(ask(None, None), reach(None))]
    assert quota.NAME not in project_only and offer.NAME not in project_only
