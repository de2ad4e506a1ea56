import pytest

from tpuwizard.core.errors import BadInput
from tpuwizard.sandbox.faults import parse_faults


def test_the_full_spec_parses():
    f = parse_faults(
        "stockout=us-central1-a, us-west1-c;unavailable=2;delete_fail=1;"
        "slow_create=5;never_ready=1;latency_ms=200;quota=1"
    )
    assert f.stockout == {"us-central1-a", "us-west1-c"}
    assert (f.slow_create, f.never_ready, f.latency_ms) == (5.0, True, 200)
    assert f.counters == {"unavailable": 2, "delete_fail": 1, "quota": 1}


def test_counted_faults_fire_exactly_n_times():
    f = parse_faults("unavailable=2")
    assert [f.take("unavailable") for _ in range(4)] == [True, True, False, False]
    assert not f.take("delete_fail")


def test_empty_spec_means_no_faults():
    f = parse_faults("")
    assert not f.stockout and not f.counters and f.slow_create is None


@pytest.mark.parametrize("bad", ["explode=1", "unavailable", "unavailable=lots", "latency_ms="])
def test_bad_specs_are_rejected_clearly(bad):
    with pytest.raises(BadInput):
        parse_faults(bad)


def test_lying_deletes_and_lost_create_answers_are_counted_faults():
    f = parse_faults("lying_delete=2;lost_create=1")
    assert f.counters == {"lying_delete": 2, "lost_create": 1}
    assert [f.take("lost_create") for _ in range(2)] == [True, False]


def test_an_unknown_fault_is_called_unknown_not_a_bad_number():
    with pytest.raises(BadInput, match=r"Unknown fault 'explode'\. Known faults: stockout"):
        parse_faults("explode=1")


@pytest.mark.parametrize(
    "bad", ["latency_ms=-5", "slow_create=nan", "slow_create=inf", "preempt_after=-1", "quota=-2"]
)
def test_negative_and_non_finite_amounts_are_refused(bad):
    with pytest.raises(BadInput, match="finite number of zero or more"):
        parse_faults(bad)


def test_a_failed_read_is_a_counted_fault_the_sandbox_answers_on_gets_only():
    from tpuwizard.sandbox.injected import injected_error

    f = parse_faults("read_error=1")
    assert injected_error(f, "POST", "/v2/projects/p/locations/z/nodes", {}) is None
    error = injected_error(f, "GET", "/v2/projects/p/locations/z/nodes/n", {})
    assert error is not None and error.http == 500
    assert injected_error(f, "GET", "/v2/projects/p/locations/z/nodes/n", {}) is None


def test_a_fault_only_the_in_memory_cloud_knows_is_refused_by_the_sandbox_by_name():
    assert parse_faults("listed_after_delete=2", memory=True).counters == {"listed_after_delete": 2}
    with pytest.raises(BadInput, match="known only to the unit tests' in-memory cloud"):
        parse_faults("listed_after_delete=2")


def test_compute_engines_own_faults_parse_and_are_named_among_the_known():
    f = parse_faults("flex_pending=1;slow_pending_delete=2.5;staging_error=1")
    assert (f.flex_pending, f.slow_pending_delete) == (True, 2.5)
    assert [f.take("staging_error") for _ in range(2)] == [True, False]
    with pytest.raises(BadInput, match=r"flex_pending, slow_pending_delete.*staging_error"):
        parse_faults("explode=1")
    with pytest.raises(BadInput, match="finite number of zero or more"):
        parse_faults("slow_pending_delete=-1")
