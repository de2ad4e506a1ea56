"""Verified teardown with an in-memory cloud: ``gone`` is written only after the cloud proves it."""

from dataclasses import replace

import pytest

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.words.choice_words import all_words

ZONE = "us-central1-a"


def node_resource(name="tpu-a", run_id="run-1"):
    return Resource("node", "practice-project", ZONE, name, "v5litepod-1", run_id)


def queued_resource(name="tpu-a-qr", node_id="tpu-a"):
    return Resource(
        "queued", "practice-project", ZONE, name, "v5litepod-1", "run-1", "spot", node_id
    )


def request(node_id="tpu-a", run_id="run-1"):
    return NodeRequest(
        zone=ZONE, node_id=node_id, slice=parse_accelerator("v5litepod-1"), run_id=run_id
    )


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "ledger.jsonl")


def last_op(ledger, resource):
    return next(e.op for e in Ledger(ledger.path).entries() if e.resource == resource)


def created(cloud, ledger, resource):
    ledger.record("intent", resource)
    if resource.kind == "queued":
        cloud.create_queued(request(resource.node_id), resource.name, "spot")
    else:
        cloud.create_node(request(resource.name, resource.run_id))
    ledger.record("created", resource)


def test_gone_is_recorded_only_after_the_delete_and_its_verification(ledger):
    cloud = MemoryCloud()
    resource = node_resource()
    created(cloud, ledger, resource)
    at_delete = []
    cloud.on_delete = lambda zone, name: at_delete.append(last_op(ledger, resource))
    result = delete_and_verify(cloud, ledger, resource, pause=0)
    assert result.verified and result.diagnosis is None
    assert at_delete == ["created"]  # not gone while the delete is under way
    assert last_op(ledger, resource) == "gone"
    # Verified: after the delete, get said NotFound and the list was read.
    after = cloud.calls[[c.method for c in cloud.calls].index("delete_node") :]
    assert [c.method for c in after][1:] == ["get_node", "list_nodes"]


def test_a_delete_that_lies_is_retried_and_not_recorded_gone_until_it_is(ledger):
    cloud = MemoryCloud.faulty("lying_delete=1")
    resource = node_resource()
    created(cloud, ledger, resource)
    at_delete = []
    cloud.on_delete = lambda zone, name: at_delete.append(last_op(ledger, resource))
    result = delete_and_verify(cloud, ledger, resource, pause=0)
    assert result.verified
    assert cloud.count("delete_node") == 2
    assert at_delete == ["created", "created"]  # the first "success" was not believed
    assert last_op(ledger, resource) == "gone"
    assert cloud.nodes == {}


def test_a_delete_that_keeps_lying_ends_unverified_and_the_ledger_keeps_it_open(ledger):
    cloud = MemoryCloud.faulty("lying_delete=100")
    resource = node_resource()
    created(cloud, ledger, resource)
    result = delete_and_verify(cloud, ledger, resource, attempts=3, pause=0)
    assert not result.verified
    assert cloud.count("delete_node") == 3
    assert result.diagnosis is not None and result.diagnosis.kind == "not_gone"
    assert "tpuwizard teardown tpu-a" in " ".join(all_words(result.diagnosis.next_steps, "cli"))
    assert last_op(ledger, resource) == "created"
    assert [e.resource for e in Ledger(ledger.path).open_entries()] == [resource]


def test_not_found_by_get_but_still_listed_is_not_gone(ledger):
    cloud = MemoryCloud.faulty("listed_after_delete=1")
    resource = node_resource()
    created(cloud, ledger, resource)
    at_delete = []
    cloud.on_delete = lambda zone, name: at_delete.append(last_op(ledger, resource))
    result = delete_and_verify(cloud, ledger, resource, pause=0)
    assert result.verified
    assert cloud.count("delete_node") == 2 and at_delete == ["created", "created"]
    assert last_op(ledger, resource) == "gone"


def test_an_error_on_one_attempt_does_not_stop_teardown(ledger):
    cloud = MemoryCloud()
    resource = node_resource()
    created(cloud, ledger, resource)
    errors = [RuntimeError("connection reset")]

    def flaky(zone, name):
        if errors:
            raise errors.pop()

    cloud.on_delete = flaky
    assert delete_and_verify(cloud, ledger, resource, pause=0).verified
    assert cloud.count("delete_node") == 2 and last_op(ledger, resource) == "gone"


def test_a_queued_resource_is_gone_only_when_its_node_is_gone_too(ledger):
    cloud = MemoryCloud()
    resource = queued_resource()
    created(cloud, ledger, resource)
    # The request disappears at once, its node a little later (after the first check).
    real_delete = cloud.delete_queued

    def delete_leaving_the_node(zone, qr_id, timeout=600):
        node = cloud.nodes.get((zone, "tpu-a"))
        real_delete(zone, qr_id)
        if node is not None and cloud.count("delete_queued") == 1:
            cloud.nodes[(zone, "tpu-a")] = node  # still there at the first check
        else:
            cloud.nodes.pop((zone, "tpu-a"), None)  # gone by the second

    cloud.delete_queued = delete_leaving_the_node
    at_delete = []
    cloud.on_delete = lambda zone, name: at_delete.append(last_op(ledger, resource))
    result = delete_and_verify(cloud, ledger, resource, pause=0)
    assert result.verified
    assert cloud.count("delete_queued") == 2 and at_delete == ["created", "created"]
    assert last_op(ledger, resource) == "gone"


def test_a_lying_queued_delete_is_retried(ledger):
    cloud = MemoryCloud.faulty("lying_delete=1")
    resource = queued_resource()
    created(cloud, ledger, resource)
    assert delete_and_verify(cloud, ledger, resource, pause=0).verified
    assert cloud.count("delete_queued") == 2
    assert cloud.queued == {} and cloud.nodes == {}


def test_reconcile_closes_what_the_cloud_no_longer_has_and_shows_what_it_has(ledger):
    cloud = MemoryCloud()
    alive, lost = node_resource("alive"), node_resource("lost")
    created(cloud, ledger, alive)
    ledger.record("intent", lost)  # a crash before the create call: nothing exists
    billables = reconcile(cloud, ledger, zones=[ZONE])
    assert [(b.resource.name, b.state, b.source) for b in billables] == [
        ("alive", "READY", "ledger+labels")
    ]
    assert last_op(ledger, lost) == "gone" and last_op(ledger, alive) == "created"


def test_reconcile_does_not_close_what_is_still_listed(ledger):
    cloud = MemoryCloud.faulty("listed_after_delete=1")
    resource = node_resource()
    created(cloud, ledger, resource)
    cloud.delete_node(ZONE, "tpu-a")  # get says NotFound, the list still has it
    reconcile(cloud, ledger, zones=[ZONE])
    assert last_op(ledger, resource) == "created"


# Google lists this zone but the project may not use it (403); the other is no zone at all (404).
BAD, UNKNOWN = "europe-west1-b", "us-east9-z"


@pytest.mark.parametrize(
    ("bad", "kind", "said"),
    [
        (BAD, "zone_unavailable", "europe-west1-b is not available to your project"),
        (UNKNOWN, "invalid_zone", "The TPU API does not know the zone us-east9-z"),
    ],
)
def test_a_record_in_a_zone_that_refuses_is_reported_on_its_own_and_the_rest_still_answer(
    ledger, bad, kind, said
):
    cloud = MemoryCloud()
    alive, lost = node_resource("alive"), replace(node_resource("lost", "run-2"), zone=bad)
    created(cloud, ledger, alive)
    ledger.record("intent", lost)
    ledger.record("created", lost)
    also_lost = replace(lost, name="lost-too", run_id="run-3")
    ledger.record("created", also_lost)
    found = reconcile(cloud, ledger)  # every zone the project lists, the refusing one included
    assert [b.resource.name for b in found] == ["alive"]
    assert [u.resource for u in found.unchecked] == [lost, also_lost]
    d = found.unchecked[0].diagnosis
    assert d.kind == kind and d.title == said
    steps = " ".join(map(str, d.next_steps))
    assert f"gcloud compute tpus tpu-vm list --zone {bad} --project practice-project" in steps
    assert f"gcloud compute tpus tpu-vm delete lost --zone {bad}" in steps
    assert "--zone ZONE" not in steps  # "choose another zone" is no help for what exists there
    # Not checked is not gone: both records stay open, and the zone was asked only once.
    assert last_op(ledger, lost) == "created" and last_op(ledger, also_lost) == "created"
    assert not [c for c in cloud.calls if c.name == "lost-too"]


def test_a_delete_in_a_zone_that_refuses_says_how_to_check_by_hand(ledger):
    cloud = MemoryCloud()  # BAD refuses, as Google answers it
    lost = replace(node_resource("lost"), zone=BAD)
    ledger.record("created", lost)
    result = delete_and_verify(cloud, ledger, lost, attempts=1, pause=0)
    assert not result.verified and result.diagnosis is not None
    assert result.diagnosis.kind == "zone_unavailable"
    steps = " ".join(map(str, result.diagnosis.next_steps))
    assert "gcloud compute tpus tpu-vm list --zone europe-west1-b" in steps
    assert last_op(ledger, lost) == "created"
