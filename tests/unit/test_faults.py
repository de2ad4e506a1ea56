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


def test_quota_limits_parse_for_every_region_or_one_and_repeat():
    f = parse_faults(
        "quota_limit=PREEMPTIBLE-TPU-V6E-per-project-region:0;"
        "quota_limit=TPUV6EPerProjectPerRegionForTPUAPI@us-east5:8,"
        "TPUS-PER-TPU-FAMILY-per-project-region:16"
    )
    assert f.quota_limits == {
        ("PREEMPTIBLE-TPU-V6E-per-project-region", ""): 0,
        ("TPUV6EPerProjectPerRegionForTPUAPI", "us-east5"): 8,
        ("TPUS-PER-TPU-FAMILY-per-project-region", ""): 16,
    }
    assert f.counters == {}  # quota=N is another key, still counted
    assert parse_faults("quota=2").counters == {"quota": 2}


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("quota_limit=PREEMPTIBLE-TPU-V6E-per-project-region", "QUOTA\\[@REGION\\]:N"),
        ("quota_limit=:4", "QUOTA\\[@REGION\\]:N"),
        ("quota_limit=X:-1", "finite number of zero or more"),
        ("quota_limit=X:lots", "not a number"),
        ("oslogin=maybe", "not one of 1, 2fa, policy"),
    ],
)
def test_bad_preflight_faults_say_what_is_wrong(bad, says):
    with pytest.raises(BadInput, match=says):
        parse_faults(bad)


@pytest.mark.parametrize(
    ("spec", "metadata", "two_factor", "policy"),
    [
        ("oslogin=1", True, False, False),
        ("oslogin=2fa", True, True, False),
        ("oslogin=policy", False, False, True),
        ("oslogin=policy,2fa", True, True, True),
        ("oslogin=0", False, False, False),
    ],
)
def test_oslogin_words(spec, metadata, two_factor, policy):
    f = parse_faults(spec)
    assert (f.oslogin, f.oslogin_2fa, f.oslogin_policy) == (metadata, two_factor, policy)


def test_the_project_faults_parse():
    f = parse_faults(
        "no_billing=1;oslogin_denied=1;no_external_ip=1;orgpolicy_unreadable=1;"
        "cloud_nat=us-east5,europe-west4;disabled_services=cloudquotas.googleapis.com"
    )
    assert f.no_billing and f.oslogin_denied and f.no_external_ip and f.orgpolicy_unreadable
    assert f.cloud_nat == {"us-east5", "europe-west4"}
    assert f.disabled_services == {"cloudquotas.googleapis.com"}
    assert parse_faults("cloud_nat=1").cloud_nat == {"*"}
    assert parse_faults("cloud_nat=0").cloud_nat == set()
    assert not parse_faults("no_billing=0").no_billing


def test_the_unknown_fault_message_names_the_new_keys():
    with pytest.raises(BadInput) as caught:
        parse_faults("explode=1")
    for key in ("quota_limit", "oslogin", "no_billing", "no_external_ip", "cloud_nat"):
        assert key in str(caught.value)


def test_looking_at_a_counted_fault_uses_none_of_it():
    f = parse_faults("api_disabled=1")
    assert f.left("api_disabled") and f.left("api_disabled")
    assert f.take("api_disabled") and not f.left("api_disabled")


def test_which_apis_need_a_quota_project():
    assert parse_faults("no_quota_project=1").needs_quota_project == {"*"}
    named = parse_faults("no_quota_project=cloudquotas.googleapis.com,orgpolicy.googleapis.com")
    assert named.needs_quota_project == {"cloudquotas.googleapis.com", "orgpolicy.googleapis.com"}
    assert parse_faults("no_quota_project=0").needs_quota_project == set()


def test_preempt_times_limits_how_many_spot_nodes_are_preempted():
    faults = parse_faults("preempt_after=5;preempt_times=1")
    assert faults.preempt_after == 5 and faults.preempt_times == 1
    assert parse_faults("preempt_after=5").preempt_times is None


def test_preempt_on_names_a_moment_of_the_script_inside_the_workers_home():
    faults = parse_faults("preempt_on=.tpuwizard/work/ckpt/*/COMMITTED;preempt_on_count=2")
    assert faults.preempt_on == ".tpuwizard/work/ckpt/*/COMMITTED"
    assert faults.preempt_on_count == 2 and parse_faults("preempt_on=x").preempt_on_count == 1
    for outside in ("/etc/passwd", "../x", "a/../../x", "~/x"):
        with pytest.raises(BadInput, match="inside the worker's home"):
            parse_faults(f"preempt_on={outside}")


def test_the_reported_resize_request_refusal_is_a_flag_off_by_default():
    assert parse_faults("").resize_request_refused is False  # Google's pages: served
    assert parse_faults("resize_request_refused=1").resize_request_refused is True
    with pytest.raises(BadInput, match="resize_request_refused"):
        parse_faults("nope=1")  # the known keys name it


def test_worker_stall_suspends_that_worker_script_job_once_it_starts(tmp_path):
    """worker_stall=1: the clock's tick stops worker 1's script job (SIGSTOP to its group) and
    leaves worker 0's and any other job alone."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path
    from types import SimpleNamespace

    from tests.waiting import wait_until
    from tpuwizard.sandbox.vms import VirtualMachines

    faults = parse_faults("worker_stall=1")
    assert faults.worker_stall == 1
    name = "projects/p/locations/us-central1-a/nodes/n"
    store = SimpleNamespace(home=tmp_path, data={"nodes": {name: {"_booted": True}}})
    vms = VirtualMachines(store, faults, None)  # type: ignore[arg-type]
    procs = {}
    for worker, job in ((0, "script-r"), (1, "script-r"), (1, "verify-r")):
        folder = vms.worker_home(name, worker) / ".tpuwizard" / "jobs" / job
        folder.mkdir(parents=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
        )
        procs[(worker, job)] = proc
        (folder / "pid").write_text(str(proc.pid))

    def state(proc) -> str:
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
        return stat[stat.rindex(")") + 2]

    try:
        assert vms.stall_worker() is True
        wait_until(lambda: state(procs[(1, "script-r")]) == "T", timeout=30)
        # The others were sent nothing (stall_worker signals synchronously): not stopped.
        assert state(procs[(0, "script-r")]) != "T" and state(procs[(1, "verify-r")]) != "T"
        assert vms.stall_worker() is False  # once each
    finally:
        for proc in procs.values():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def test_verify_stall_suspends_that_worker_verifier_job_and_leaves_its_script(tmp_path):
    """verify_stall=0: worker 0's verifier job (verify-*) is stopped, its script job is not."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path
    from types import SimpleNamespace

    from tests.waiting import wait_until
    from tpuwizard.sandbox.vms import VirtualMachines

    faults = parse_faults("verify_stall=0")
    assert faults.verify_stall == 0 and faults.worker_stall is None
    name = "projects/p/locations/us-central1-a/nodes/n"
    store = SimpleNamespace(home=tmp_path, data={"nodes": {name: {"_booted": True}}})
    vms = VirtualMachines(store, faults, None)  # type: ignore[arg-type]
    procs = {}
    for job in ("verify-r", "script-r"):
        folder = vms.worker_home(name, 0) / ".tpuwizard" / "jobs" / job
        folder.mkdir(parents=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
        )
        procs[job] = proc
        (folder / "pid").write_text(str(proc.pid))

    def state(proc) -> str:
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
        return stat[stat.rindex(")") + 2]

    try:
        assert vms.stall_worker() is True
        wait_until(lambda: state(procs["verify-r"]) == "T", timeout=30)
        assert state(procs["script-r"]) != "T"
        assert vms.stall_worker() is False  # once
    finally:
        for proc in procs.values():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def test_worker_stall_needs_a_worker_number():
    with pytest.raises(BadInput, match="not a number"):
        parse_faults("worker_stall=two")


def test_maintenance_sigterm_is_seconds_after_the_script_starts():
    assert parse_faults("maintenance_sigterm=2.5").maintenance_sigterm == 2.5
    assert parse_faults("").maintenance_sigterm is None
    with pytest.raises(BadInput):
        parse_faults("maintenance_sigterm=-1")
