"""Every fault the sandbox can inject, through the real client, down to the diagnosis."""

import threading
import time

import pytest
from google.api_core import exceptions as gx
from google.auth.exceptions import GoogleAuthError

from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.tpu.client import TpuCloud
from tpuwizard.core.cloud.types import RUN_LABEL, NodeRequest
from tpuwizard.core.cloud.zones import live
from tpuwizard.core.errors import CreateFailed, QueueExpired, WaitTimedOut
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.verified import delete_and_verify
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.words.choice_words import all_words
from tpuwizard.words.event_text import diagnosis_text

ZONE = "us-central1-a"


RUN = "20261129-152500-ab12"


def request(node_id="tpu-a", zone=ZONE, accelerator="v5litepod-4"):
    return NodeRequest(zone=zone, node_id=node_id, slice=parse_accelerator(accelerator), run_id=RUN)


def ctx(zone=ZONE, accelerator="v5litepod-4"):
    return Context(
        project="practice-project",
        zone=zone,
        accelerator=accelerator,
        slice=parse_accelerator(accelerator),  # the diagnosis's Slice, as a launch's state fills
        account="me@example.com",
        name="tpu-a",
    )


def test_stockout_fails_the_create_and_offers_other_zones_and_flex_start(sandbox):
    _, cloud = sandbox(faults="stockout=us-central1-a")
    op = cloud.create_node(request())
    with pytest.raises(CreateFailed) as err:
        cloud.wait_for_node(ZONE, "tpu-a", op, poll=0.05)
    assert isinstance(err.value.error, gx.ResourceExhausted)  # operation error code 8
    d = diagnose(err.value, ctx())
    assert d.kind == "stockout"
    assert ZONE not in d.alternatives and "us-west1-c" in d.alternatives
    assert any("--route flex" in s for s in all_words(d.next_steps, "cli"))
    assert "nothing is billing" in d.explanation
    assert cloud.get_node(ZONE, "tpu-a") is None
    # Another zone still works.
    other = cloud.create_node(request(zone="us-west1-c"))
    assert cloud.wait_for_node("us-west1-c", "tpu-a", other, poll=0.05).state == "READY"


def test_stockout_leaves_a_queued_resource_waiting(sandbox):
    _, cloud = sandbox(faults="stockout=us-central1-a", delay=0.3)
    cloud.create_queued(request("q-node"), "q1", "spot")
    with pytest.raises(QueueExpired) as caught:  # the wait ran out with no capacity
        cloud.wait_for_queued(ZONE, "q1", timeout=0.8, poll=0.05)
    assert diagnose(caught.value, ctx()).kind == "stockout"
    assert cloud.get_queued(ZONE, "q1").state == "WAITING_FOR_RESOURCES"
    cloud.delete_queued(ZONE, "q1")
    assert cloud.queued_gone(ZONE, "q1")


def test_unavailable_reads_are_retried(sandbox):
    _, cloud = sandbox(faults="unavailable=2")
    assert ZONE in cloud.list_zones()


def test_unavailable_create_is_not_retried_blindly(sandbox):
    _, cloud = sandbox(faults="unavailable=1")
    with pytest.raises(gx.ServiceUnavailable):
        cloud.create_node(request())
    assert cloud.get_node(ZONE, "tpu-a") is None  # the caller checks, then decides


def test_unavailable_until_retries_run_out_is_diagnosed(sandbox):
    server, _ = sandbox(faults="unavailable=1000")
    cloud = TpuCloud("practice-project", endpoint=server.endpoint, retry_deadline=1)
    with pytest.raises(Exception) as err:
        cloud.list_zones()
    d = diagnose(err.value, ctx())
    assert d.kind == "unavailable" and "try again" in " ".join(all_words(d.next_steps, "cli"))


def test_delete_failure_is_reported_and_a_retry_deletes(sandbox):
    _, cloud = sandbox(faults="delete_fail=1")
    cloud.wait_for_node(ZONE, "tpu-a", cloud.create_node(request()), poll=0.05)
    with pytest.raises(gx.GoogleAPICallError) as err:
        cloud.delete_node(ZONE, "tpu-a")
    assert diagnose(err.value, ctx()).kind == "api_error"
    assert not cloud.node_gone(ZONE, "tpu-a")  # still there, still billing: say so
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.node_gone(ZONE, "tpu-a")


def test_slow_create_takes_its_time(sandbox):
    _, cloud = sandbox(faults="slow_create=1.2", delay=0.1)
    start = time.monotonic()
    cloud.wait_for_node(ZONE, "tpu-a", cloud.create_node(request()), poll=0.05)
    assert time.monotonic() - start >= 1.2


def test_never_ready_times_out_with_a_diagnosis(sandbox):
    _, cloud = sandbox(faults="never_ready=1", delay=0.1)
    states = []
    with pytest.raises(WaitTimedOut) as err:
        cloud.wait_for_node(
            ZONE,
            "tpu-a",
            cloud.create_node(request()),
            on_state=states.append,
            timeout=0.6,
            poll=0.05,
        )
    assert states == ["CREATING"]
    d = diagnose(err.value, ctx())
    assert d.kind == "timeout" and "tpuwizard status" in " ".join(all_words(d.next_steps, "cli"))


@pytest.mark.parametrize(
    ("fault", "kind", "hint"),
    [
        ("forbidden=1", "permission", "roles/tpu.admin"),
        ("api_disabled=1", "api_disabled", "gcloud services enable tpu.googleapis.com"),
        ("quota=1", "quota", "TPUV5sLitepodServingPerProjectPerRegionForTPUAPI"),
        ("unauthenticated=1", "unauthenticated", "gcloud auth application-default login"),
    ],
)
def test_access_problems_name_the_fix(sandbox, fault, kind, hint):
    _, cloud = sandbox(faults=fault)
    # A 401 makes google-auth try to refresh; anonymous credentials refuse with InvalidOperation,
    # real ones end in Unauthorized. Both must read as "not signed in".
    with pytest.raises((gx.GoogleAPICallError, GoogleAuthError)) as err:
        cloud.create_node(request())
    d = diagnose(err.value, ctx())
    assert d.kind == kind
    assert hint in diagnosis_text(d)
    assert cloud.get_node(ZONE, "tpu-a") is None


def test_already_exists(sandbox):
    _, cloud = sandbox()
    cloud.create_node(request())
    with pytest.raises(gx.Conflict) as err:
        cloud.create_node(request())
    d = diagnose(err.value, ctx())
    assert d.kind == "already_exists" and "tpuwizard teardown tpu-a" in diagnosis_text(d)


def test_accelerator_not_offered_in_zone(sandbox):
    _, cloud = sandbox()
    with pytest.raises(gx.BadRequest) as err:
        cloud.create_node(request(accelerator="v6e-4"))
    d = diagnose(err.value, ctx(accelerator="v6e-4"))
    assert d.kind == "invalid_zone" and "us-east5-b" in d.alternatives
    # Google's words, without the request line the client library puts before them.
    assert "not available in zone" in d.explanation and "http" not in d.explanation


def test_unknown_zone(sandbox):
    _, cloud = sandbox()
    with pytest.raises(gx.NotFound) as err:
        cloud.accelerator_types("mars-north1-a")
    assert diagnose(err.value, ctx(zone="mars-north1-a")).kind == "invalid_zone"


def test_network_unreachable():
    cloud = TpuCloud("practice-project", endpoint="http://127.0.0.1:9", retry_deadline=1)
    with pytest.raises(Exception) as err:
        cloud.list_zones()
    d = diagnose(err.value, ctx())
    assert d.kind == "unreachable" and "Traceback" not in diagnosis_text(d)


def test_zone_survey_is_concurrent(sandbox):
    # Every request waits 200 ms: surveyed one by one, 16 locations take at least 3.2 s (the
    # AI zones are hidden until the project turns on their visibility).
    _, cloud = sandbox(faults="latency_ms=200")
    zones = 16
    # Seen by the calls in flight at once, not by the survey's time, which a loaded machine
    # stretches past the sequential sum.
    in_flight, most, lock = [0], [0], threading.Lock()
    ask = cloud.accelerator_types

    def counted(*args, **kwargs):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        try:
            return ask(*args, **kwargs)
        finally:
            with lock:
                in_flight[0] -= 1

    cloud.accelerator_types = counted
    survey = live(cloud, refresh=True)
    # One location answers 403 (not usable by this project), as Google's do; the rest answer.
    assert len(survey.zones) == zones - 1 and list(survey.failures) == ["europe-west1-b"]
    assert most[0] > 1, "the survey asked the locations one by one"
    assert "v5litepod-4" in survey.zones[ZONE]
    cached = live(cloud)
    assert cached.cached and cached.zones == survey.zones and cached.failures == survey.failures


def test_a_lost_create_answer_hides_a_node_that_exists(sandbox):
    server, cloud = sandbox(faults="lost_create=1")
    with pytest.raises(gx.ServiceUnavailable):
        cloud.create_node(request())
    node = cloud.get_node(ZONE, "tpu-a")  # the create was carried out all the same
    assert node is not None and node.labels[RUN_LABEL] == "20261129-152500-ab12"
    with pytest.raises(gx.Conflict):  # so a blind retry is refused: it exists
        cloud.create_node(request())
    assert cloud.wait_for_node(ZONE, "tpu-a", poll=0.05).state == "READY"
    assert created_operations(server) == 1


def test_a_lost_queued_create_answer_hides_a_request_that_exists(sandbox):
    server, cloud = sandbox(faults="lost_create=1", delay=0.2)
    with pytest.raises(gx.ServiceUnavailable):
        cloud.create_queued(request("q-node"), "q1", "spot")
    assert cloud.get_queued(ZONE, "q1") is not None
    assert cloud.wait_for_queued(ZONE, "q1", poll=0.05).state == "ACTIVE"
    assert created_operations(server) == 1


def test_a_lying_delete_is_retried_by_teardown_and_not_recorded_gone(sandbox, tmp_path):
    server, cloud = sandbox(faults="lying_delete=2", delay=0.1)
    cloud.wait_for_node(ZONE, "tpu-a", cloud.create_node(request()), poll=0.05)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    # The record of the run that made it (its run id is on the node's labels).
    resource = Resource("node", cloud.project, ZONE, "tpu-a", "v5litepod-4", RUN)
    ledger.record("created", resource)
    # The delete operation ends done and without an error, and the node is still there.
    cloud.delete_node(ZONE, "tpu-a")
    assert cloud.get_node(ZONE, "tpu-a").state == "READY"
    assert "tpu-a" in [n.name for n in cloud.list_nodes(ZONE)]
    # Teardown does not believe a lie: with one attempt left in the fault, one try is not enough.
    first = delete_and_verify(cloud, ledger, resource, attempts=1, pause=0)
    assert not first.verified and first.diagnosis.kind == "not_gone"
    assert [e.op for e in Ledger(ledger.path).entries()] == ["created"]
    # The fault is used up: the next delete works, and only now is it recorded gone.
    assert delete_and_verify(cloud, ledger, resource, attempts=3, pause=0.05).verified
    assert [e.op for e in Ledger(ledger.path).entries()] == ["gone"]
    assert cloud.node_gone(ZONE, "tpu-a") and deletes(server) == 3


def test_a_lying_queued_delete_leaves_the_request(sandbox, tmp_path):
    _, cloud = sandbox(faults="lying_delete=1", delay=0.2)
    cloud.create_queued(request("q-node"), "q1", "spot")
    cloud.wait_for_queued(ZONE, "q1", poll=0.05)
    resource = Resource("queued", cloud.project, ZONE, "q1", "v5litepod-4", RUN, "spot", "q-node")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    cloud.delete_queued(ZONE, "q1")
    assert cloud.get_queued(ZONE, "q1").state == "ACTIVE" and not cloud.queued_gone(ZONE, "q1")
    assert delete_and_verify(cloud, ledger, resource, pause=0.05).verified
    assert cloud.queued_gone(ZONE, "q1") and cloud.node_gone(ZONE, "q-node")
    assert [e.op for e in Ledger(ledger.path).entries()] == ["gone"]


def created_operations(server) -> int:
    ops = server.state.data["operations"].values()
    return sum(op["metadata"]["verb"] == "create" for op in ops)


def deletes(server) -> int:
    ops = server.state.data["operations"].values()
    return sum(op["metadata"]["verb"] == "delete" for op in ops)


def test_unavailable_queued_resource_reads_are_retried(sandbox):
    server, cloud = sandbox(delay=0)
    cloud.create_queued(request(), "q1", "spot")
    server.state.faults.counters["unavailable"] = 2  # the next two requests answer 503
    assert cloud.get_queued(ZONE, "q1").name == "q1"
    server.state.faults.counters["unavailable"] = 2
    assert [q.name for q in cloud.list_queued(ZONE)] == ["q1"]
    cloud.delete_queued(ZONE, "q1")


def test_a_truncated_state_file_is_said_as_such_and_never_written_over(sandbox):
    """Issue 22, item 14: it read "The TPU API rejected the request" (the server answered 400
    "The body is not JSON.", about a body that was fine)."""
    server, cloud = sandbox(delay=0)
    cloud.wait_for_node(ZONE, "tpu-a", cloud.create_node(request()), poll=0.05)
    state = server.state.file
    damaged = state.read_text()[:40]
    state.write_text(damaged)  # cut short: a crash of something else, a full disk
    with pytest.raises(gx.GoogleAPICallError) as caught:
        cloud.create_node(request("tpu-b"))
    d = diagnose(caught.value, ctx())
    assert d.kind != "invalid" and "rejected" not in d.title
    assert str(state) in d.explanation and "move that file aside" in d.explanation
    assert state.read_text() == damaged  # the only record of the practice cloud is kept
