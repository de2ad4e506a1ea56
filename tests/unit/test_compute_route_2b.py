"""The course's Route 2B (``launch --via resize-request``) against the in-memory Compute Engine
clients (fake_compute_graph.py): a FLEX_START template, a MIG of size 0 and a resize request for
one VM, each announced before its insert and each body one compute.v1.json takes; the VM awaited;
the request cancelled and deleted before its MIG; a refusal, a failed or waiting request, a lost
answer; and a MIG of the same name that is not ours is never taken for ours."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.integration.discovery import errors
from tests.unit.fake_compute_graph import FakeGraph, FakeReads
from tests.unit.test_compute_flex_slice import compute_doc
from tpuwizard.core.cloud.backends import VIA_RESIZE_REQUEST
from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.errors import REQUEST_REFUSED_CODE
from tpuwizard.core.cloud.compute.slices import ComputeSlices
from tpuwizard.core.cloud.diagnose.diagnosis import Context
from tpuwizard.core.cloud.diagnose.failure import diagnose
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed, QueueExpired
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.plan import catalog
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE, REGION, NAME = "us-east5-a", "us-east5", "tpuwizard-r1"


def request(via: str = VIA_RESIZE_REQUEST, wait: float = 600) -> NodeRequest:
    return NodeRequest(
        zone=ZONE,
        node_id=NAME,
        slice=parse_accelerator("v6e-4"),
        run_id="r1",
        owner="me",
        max_run_s=4 * 3600,
        metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAA"},
        route="flex",
        queue_wait_s=wait,
        via=via,
    )


def slices(graph: FakeGraph, clock=None) -> ComputeSlices:
    from google.cloud import compute_v1

    if clock is None:
        return ComputeSlices(compute_v1, "p", graph.client, 30.0, None, reads=FakeReads(graph))
    return ComputeSlices(
        compute_v1, "p", graph.client, 30.0, None, clock=clock, reads=FakeReads(graph)
    )


def made(graph: FakeGraph, parts: list[Part] | None = None, s: ComputeSlices | None = None):
    s = s or slices(graph)
    build = s.create(request(), (parts if parts is not None else []).append)
    return s, s.wait(ZONE, NAME, build, None, timeout=5, poll=0.01, cancelled=None)


def test_the_three_parts_are_made_in_order_each_announced_before_its_insert():
    graph, parts, seen_at_announce = FakeGraph(), [], []

    def tell(part: Part) -> None:
        parts.append(part)
        seen_at_announce.append(list(graph.names()))

    s = slices(graph)
    node = s.wait(ZONE, NAME, s.create(request(), tell), None, timeout=5, poll=0.01, cancelled=None)
    assert [(p.kind, p.zone, p.name) for p in parts] == [
        (body.TEMPLATE, REGION, f"{NAME}-it"),
        (body.MIG, ZONE, NAME),
        (body.REQUEST, ZONE, f"{NAME}-rr"),
    ]
    inserts = ["templates.insert", "migs.insert", "requests.insert"]
    for i, announced in enumerate(seen_at_announce):  # each told before its own insert
        assert inserts[i] not in announced and all(x in announced for x in inserts[:i])
    writes = [n for n in graph.names() if n.endswith((".insert", ".resize"))]
    assert writes == inserts  # no workload policy, no resize: the request asks for the VM
    assert node.state == "RUNNING" and len(node.endpoints) == 1
    assert node.parts == ("MIG", "1 VM", "resize request", "template")


def test_the_bodies_are_the_course_s_with_the_deadline_and_every_part_s_owner():
    graph = FakeGraph()
    made(graph)
    template = graph.templates[f"{NAME}-it"]
    scheduling = template.properties.scheduling
    assert template.properties.machine_type == "ct6e-standard-4t"  # not the course's v5e
    assert scheduling.provisioning_model == "FLEX_START"
    assert scheduling.instance_termination_action == "DELETE"
    assert scheduling.max_run_duration.seconds == 4 * 3600  # the course's --max-run-duration=4h
    mig = graph.migs[NAME]
    assert mig.target_size == 1 and not mig.target_size_policy.mode  # size 0, then the request
    assert not mig.resource_policies.workload_policy
    sent = graph.requests[NAME][f"{NAME}-rr"]
    assert sent.resize_by == 1 and sent.requested_run_duration.seconds == 4 * 3600
    for part in (template, mig, sent):  # ownership where a part has no labels
        note = body.read_note(part.description)
        assert note is not None and note.labels["tpuwizard-owner"] == "me"


def test_every_body_is_one_compute_v1_json_takes():
    doc, req = compute_doc(), request()
    for schema, sent in (
        ("InstanceTemplate", body.template_body(req)),
        ("InstanceGroupManager", body.mig_body(req, "p")),
        ("InstanceGroupManagerResizeRequest", body.request_body(req)),
    ):
        assert errors(doc, {"$ref": schema}, sent) == [], schema
    assert "params" not in body.template_body(req)["properties"]


def test_a_refused_request_is_a_create_failure_naming_the_bulk_default_and_leaves_nothing():
    graph = FakeGraph(refuse_requests=True)
    with pytest.raises(CreateFailed) as err:
        made(graph)
    assert err.value.error.codes == (REQUEST_REFUSED_CODE,)
    d = diagnose(
        err.value,
        Context(
            zone=ZONE,
            accelerator="v6e-4",
            slice=catalog.parse_accelerator("v6e-4"),
            backend="compute",
        ),
    )
    assert "with TPU is not allowed" in d.explanation and "POST" not in d.explanation
    steps = " ".join(map(str, d.next_steps))
    assert "--via resize-request" in steps and "bulk mode" in steps
    s = slices(graph)
    s.delete(ZONE, NAME, timeout=5)  # what the launch does: the MIG, then the template
    assert not (graph.templates or graph.migs or graph.instances) and s.read.gone(ZONE, NAME)


def test_teardown_cancels_an_active_request_deletes_it_then_the_mig_and_template_verified():
    graph = FakeGraph(waiting=True)  # the request ACCEPTED, no capacity yet
    s = slices(graph)
    build = s.create(request(), lambda part: None)
    while not s._advance(build):
        pass
    graph.calls.clear()
    s.delete(ZONE, NAME, timeout=5)
    writes = [n for n in graph.names() if n.endswith((".cancel", ".delete"))]
    # The policy's delete answers 404 (Route 2B has none; a delete by name does not know how
    # the slice was made), which is "already gone".
    cancel_delete = ["requests.cancel", "requests.delete"]
    assert writes == [*cancel_delete, "migs.delete", "templates.delete", "policies.delete"]
    graph.calls.clear()
    assert s.read.gone(ZONE, NAME) and "migs.list" in graph.names()  # verified by listing


def test_a_request_left_waiting_past_the_queue_wait_is_given_up():
    clock = itertools.count(0.0, 30.0)  # each look, 30 s later
    graph = FakeGraph(waiting=True)
    s = slices(graph, clock=lambda: next(clock))
    build = s.create(request(wait=120), lambda part: None)
    with pytest.raises(QueueExpired) as err:
        s.wait(ZONE, NAME, build, None, timeout=5, poll=0.001, cancelled=None)
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in str(err.value.error)


@pytest.mark.parametrize("state", ["FAILED", "CANCELLED"])
def test_a_failed_or_cancelled_request_ends_the_wait(state):
    graph = FakeGraph(waiting=True)
    s = slices(graph)
    build = s.create(request(), lambda part: None)
    while not s._advance(build):
        pass
    graph.requests[NAME][f"{NAME}-rr"].state = state
    with pytest.raises(CreateFailed):
        s.wait(ZONE, NAME, build, None, timeout=5, poll=0.01, cancelled=None)


def test_a_lost_answer_to_the_first_insert_is_found_and_the_build_goes_on():
    graph = FakeGraph()
    s = slices(graph)
    insert = s.templates.insert_unary

    def insert_then_lose(**kw):
        insert(**kw)
        raise ConnectionResetError("reset after the template was made")

    s.templates.insert_unary = insert_then_lose
    with pytest.raises(ConnectionResetError):
        s.create(request(), lambda part: None)
    # The launch found the template (its labels ours) and waits with no operation.
    node = s.wait(ZONE, NAME, None, None, timeout=5, poll=0.01, cancelled=None)
    assert node.state == "RUNNING" and len(graph.templates) == 1
    inserts = [n for n in graph.names() if n.endswith(".insert")]
    assert inserts == ["templates.insert", "migs.insert", "requests.insert"]  # each once


def foreign_mig_and_cloud(graph: FakeGraph):
    from google.cloud import compute_v1

    from tpuwizard.core.cloud.compute.client import ComputeCloud

    graph.migs[NAME] = compute_v1.InstanceGroupManager(
        name=NAME, base_instance_name="theirs", description="someone else's"
    )
    cloud = ComputeCloud("p", endpoint="http://127.0.0.1:1")
    cloud.slices = slices(graph)
    cloud.reads = FakeReads(graph)  # no instance of the name: the MIG is read
    cloud.instances = graph.client(compute_v1.InstancesClient)  # of the name: none
    resource = Resource(
        "node",
        "p",
        ZONE,
        NAME,
        "v6e-4",
        "r1",
        "flex",
        owner="me",
        backend="compute",
        via=VIA_RESIZE_REQUEST,
    )
    return cloud, resource


def test_a_mig_of_the_same_name_that_is_not_ours_is_never_touched(tmp_path):
    from tpuwizard.core.launch.records.ledger import Ledger
    from tpuwizard.core.launch.teardown.verified import delete_and_verify

    graph = FakeGraph()
    cloud, resource = foreign_mig_and_cloud(graph)
    assert cloud.slices.read.fold(ZONE, [])[0] == []  # status lists no MIG without our description
    result = delete_and_verify(cloud, Ledger(tmp_path / "ledger.jsonl"), resource)
    assert result.verified  # nothing of ours there
    assert NAME in graph.migs and "migs.delete" not in graph.names()
    assert not [n for n in graph.names() if n.startswith("requests.")]  # its requests unread


def test_our_template_beside_a_foreign_mig_of_its_name_is_deleted_and_the_mig_left(tmp_path):
    # A crash after our template, when someone else's MIG held the name (its insert a 409).
    from google.cloud import compute_v1

    from tpuwizard.core.launch.records.ledger import Ledger
    from tpuwizard.core.launch.teardown.verified import delete_and_verify

    graph = FakeGraph()
    cloud, resource = foreign_mig_and_cloud(graph)
    template = compute_v1.InstanceTemplate.from_json(json.dumps(body.template_body(request())))
    graph.templates[f"{NAME}-it"] = template
    found = cloud.get_node(ZONE, NAME)
    assert found is not None and found.parts == ("template",)  # the MIG not read as ours
    result = delete_and_verify(cloud, Ledger(tmp_path / "ledger.jsonl"), resource)
    assert result.verified and not graph.templates
    assert NAME in graph.migs and "migs.delete" not in graph.names()
    assert "requests.cancel" not in graph.names() and "requests.delete" not in graph.names()
