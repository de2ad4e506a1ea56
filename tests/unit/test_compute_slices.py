"""A multi-host slice on Compute Engine against in-memory clients (fake_compute_graph.py): the
graph made in order with each part announced first, ready only when the topology is ACTIVE,
a degraded topology or a stockout a capacity failure, deleted in reverse, one node in a list,
and a part left by a crash still found."""

from __future__ import annotations

import pytest

from tests.unit.fake_compute_graph import FakeGraph, FakeReads
from tpuwizard.core.cloud.compute import slice_body as body
from tpuwizard.core.cloud.compute.errors import capacity_refused
from tpuwizard.core.cloud.compute.slices import ComputeSlices
from tpuwizard.core.cloud.compute.states import bills_in_state
from tpuwizard.core.cloud.protocol import Part
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.errors import CreateFailed
from tpuwizard.core.launch.records.ledger import Resource
from tpuwizard.core.launch.records.ownership import is_instance
from tpuwizard.core.plan.catalog import parse_accelerator

ZONE, REGION, NAME = "us-east5-b", "us-east5", "tpuwizard-r1"


def request(accelerator: str = "v6e-16") -> NodeRequest:
    return NodeRequest(
        zone=ZONE,
        node_id=NAME,
        slice=parse_accelerator(accelerator),
        run_id="r1",
        owner="me",
        max_run_s=3600,
        metadata={"ssh-keys": "tpuwizard:ssh-ed25519 AAAA"},
    )


def slices(graph: FakeGraph) -> ComputeSlices:
    from google.cloud import compute_v1

    return ComputeSlices(compute_v1, "p", graph.client, 30.0, None, reads=FakeReads(graph))


def made(graph: FakeGraph, parts: list[Part] | None = None):
    s = slices(graph)
    told = parts if parts is not None else []
    build = s.create(request(), told.append)
    return s, s.wait(ZONE, NAME, build, None, timeout=5, poll=0.01, cancelled=None)


def test_the_graph_is_made_in_order_each_part_announced_before_its_insert():
    graph, parts = FakeGraph(), []
    seen_at_announce = []

    def tell(part: Part) -> None:
        parts.append(part)
        seen_at_announce.append(list(graph.names()))

    s = slices(graph)
    build = s.create(request(), tell)
    node = s.wait(ZONE, NAME, build, None, timeout=5, poll=0.01, cancelled=None)
    assert [(p.kind, p.zone, p.name) for p in parts] == [
        (body.POLICY, REGION, f"{NAME}-wp"),
        (body.TEMPLATE, REGION, f"{NAME}-it"),
        (body.MIG, ZONE, NAME),
    ]
    inserts = ["policies.insert", "templates.insert", "migs.insert"]
    for i, announced in enumerate(seen_at_announce):  # each told before its own insert
        assert inserts[i] not in announced and all(x in announced for x in inserts[:i])
    writes = [n for n in graph.names() if n.endswith((".insert", ".resize"))]
    assert writes == [*inserts, "migs.resize"]
    resize = next(kw for n, kw in graph.calls if n == "migs.resize")
    assert resize["size"] == 4
    assert node.state == "RUNNING" and len(node.endpoints) == 4
    # Worker order is the VMs' name order, stable whatever order the MIG made them in.
    names = sorted(graph.instances)
    assert node.endpoints == tuple(
        str(graph.instances[n].network_interfaces[0].network_i_p) for n in names
    )


def test_the_bodies_carry_bulk_do_nothing_the_policy_the_deadline_and_the_slice_label():
    graph = FakeGraph()
    made(graph)
    mig = graph.migs[NAME]
    assert mig.target_size_policy.mode == "BULK"
    assert mig.instance_lifecycle_policy.default_action_on_failure == "DO_NOTHING"
    assert mig.resource_policies.workload_policy.endswith(
        f"regions/{REGION}/resourcePolicies/{NAME}-wp"
    )
    policy = graph.policies[f"{NAME}-wp"]
    assert policy.workload_policy.accelerator_topology == "4x4"
    assert not policy.group_placement_policy  # never a placement policy (tpu7x refuses one)
    props = graph.templates[f"{NAME}-it"].properties
    assert props.machine_type == "ct6e-standard-4t"
    assert props.scheduling.instance_termination_action == "DELETE"
    assert props.scheduling.max_run_duration.seconds == 3600
    labels = dict(props.labels)
    assert labels[body.SLICE_LABEL] == NAME and labels["tpuwizard-owner"] == "me"
    assert labels["managed-by"] == "tpuwizard" and labels["tpuwizard-run"] == "r1"


def test_v5p_and_tpu7x_topologies_are_three_dimensional():
    def topology(name: str) -> str:
        return body.topology(parse_accelerator(name))

    assert topology("v5p-16") == "2x2x2" and topology("tpu7x-16") == "2x2x2"
    assert topology("v6e-16") == "4x4" and topology("v6e-32") == "4x8"


@pytest.mark.parametrize("state", ["ACTIVE_DEGRADED", "FAILED"])
def test_a_degraded_topology_is_not_ready_but_a_capacity_failure(state):
    with pytest.raises(CreateFailed) as err:
        made(FakeGraph(topology_state=state))
    assert capacity_refused(err.value.error)


def test_a_stockout_during_the_resize_is_a_capacity_failure_and_the_delete_leaves_nothing():
    graph = FakeGraph(stockout=True)
    with pytest.raises(CreateFailed) as err:
        made(graph)
    assert capacity_refused(err.value.error)
    s = slices(graph)
    assert s.read.get(ZONE, NAME) is not None  # the policy, template and MIG exist
    s.delete(ZONE, NAME, timeout=5)
    assert not (graph.policies or graph.templates or graph.migs or graph.instances)
    assert s.read.gone(ZONE, NAME)


def test_delete_goes_in_reverse_mig_then_template_then_policy_never_vm_by_vm():
    graph = FakeGraph()
    s, _ = made(graph)
    graph.calls.clear()
    s.delete(ZONE, NAME, timeout=5)
    deletes = [n for n in graph.names() if n.endswith(".delete")]
    assert deletes == ["migs.delete", "templates.delete", "policies.delete"]
    assert s.read.gone(ZONE, NAME) and s.read.get(ZONE, NAME) is None


def test_a_slice_lists_as_one_node_and_its_vms_are_folded_into_it():
    graph = FakeGraph()
    s, _ = made(graph)
    nodes, loose = s.read.fold(ZONE, list(graph.instances.values()))
    assert [(n.name, n.state, len(n.endpoints)) for n in nodes] == [(NAME, "RUNNING", 4)]
    assert loose == [] and nodes[0].accelerator_type == "v6e-16"
    assert bills_in_state("node", nodes[0].state)


def test_a_template_left_by_a_crash_is_still_the_slice_listed_and_its_own_delete_ends_it():
    graph = FakeGraph()
    s = slices(graph)
    build = s.create(request(), lambda part: None)
    s._advance(build)  # the policy is done, the template inserted: then the process dies
    del graph.policies[f"{NAME}-wp"]  # and only the template is left
    nodes, _ = s.read.fold(ZONE, [])
    assert [(n.name, n.state) for n in nodes] == [(NAME, "PARTS_LEFT")]
    resource = Resource("node", "p", ZONE, NAME, "v6e-16", "r1", owner="me", backend="compute")
    assert is_instance(nodes[0].labels, resource)  # teardown's ownership check holds
    assert not bills_in_state("node", "PARTS_LEFT")
    template = Part(body.TEMPLATE, REGION, f"{NAME}-it")
    assert template in s.read.parts(ZONE, NAME) and s.read.part_labels(template) is not None
    s.delete(ZONE, NAME, timeout=5)
    assert s.read.part_gone(template) and s.read.gone(ZONE, NAME)


def test_every_call_has_a_timeout_and_reads_and_deletes_are_retried_inserts_never():
    graph = FakeGraph()
    s = slices(graph)
    s.retry = "the-retry"
    build = s.create(request(), lambda part: None)
    s.wait(ZONE, NAME, build, None, timeout=5, poll=0.01, cancelled=None)
    s.delete(ZONE, NAME, timeout=5)
    for method, kw in graph.calls:  # FakeGraph.log asserts each has a timeout
        if kw["timeout"] == "reader":  # a read: ComputeReads' own timeout and retry
            continue
        writes = method.endswith((".insert", ".resize"))
        assert (kw.get("retry") == "the-retry") != writes, method


def test_a_single_vm_s_teardown_reads_no_slice_part_when_the_ledger_says_single_host():
    # A slice's name reads as an instance's: without the ledger's accelerator, three reads
    # (a VM list, a template get, a policy get) for parts a single VM never has.
    from tpuwizard.core.cloud.compute.client import ComputeCloud
    from tpuwizard.core.launch.teardown.verified import _whole_gone

    cloud = ComputeCloud("p", endpoint="http://127.0.0.1:1")
    graph = FakeGraph()
    cloud.slices = slices(graph)
    cloud.node_gone = lambda zone, name: True  # the instance itself: verified gone
    vm = Resource("node", "p", ZONE, "tpu-one", "v6e-8", "r1", owner="me", backend="compute")
    assert _whole_gone(cloud, vm) and graph.calls == []
    assert cloud.parts_of("node", ZONE, "tpu-one", None) != []  # unknown: still looked for
    assert len(graph.calls) == 1  # its VM list; the template and policy are read by teardown
    made(graph)  # a slice: its parts are looked for, and found
    parts = cloud.parts_of("node", ZONE, NAME, None, "v6e-16")
    assert {p.kind for p in parts} == {body.VM, body.TEMPLATE, body.POLICY}


def test_status_shows_a_slice_as_one_resource_with_the_parts_read_with_it(monkeypatch, capsys):
    from tpuwizard.core.launch.records.billable import Billable
    from tpuwizard.words.render import render_status

    graph = FakeGraph()
    s, _ = made(graph)
    nodes, _ = s.read.fold(ZONE, list(graph.instances.values()))
    assert nodes[0].parts == ("MIG", "4 VMs", "template", "policy")
    del graph.migs[NAME], graph.policies[f"{NAME}-wp"]  # a crash left the template alone
    graph.instances.clear()
    assert s.read.fold(ZONE, [])[0][0].parts == ("template",)
    monkeypatch.setenv("COLUMNS", "200")
    resource = Resource("node", "p", ZONE, NAME, "v6e-16", "r1", backend="compute")
    render_status([Billable(resource, "RUNNING", 60.0, 1.0, "ledger", parts=nodes[0].parts)], "x")
    assert f"{NAME}: MIG + 4 VMs + template + policy" in capsys.readouterr().out


def test_the_compute_engine_guide_and_the_wizard_s_help_say_what_route_2b_meets_and_what_we_do():
    from pathlib import Path

    from tpuwizard.sandbox.compute.mig_resize import RESIZE_REQUEST_REFUSED
    from tpuwizard.tui.screens.review import ReviewScreen

    guide = Path(__file__).parents[2] / "docs/guides/compute-engine.md"
    readme = " ".join(guide.read_text().split())
    for text in (readme, ReviewScreen.HELP):
        assert "Route 2B" in text and RESIZE_REQUEST_REFUSED in text  # the refusal users report
        assert all(word in text for word in ("workload policy", "template", "BULK", "MIG"))
    assert "reference/compute-engine.md" in readme and "2024-04-29" in readme  # the sources
