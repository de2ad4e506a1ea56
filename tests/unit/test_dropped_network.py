"""A dropped network during a create, on each backend (the in-memory cloud with the sandbox's
fault keys): a create that made no connection was never sent (nothing exists, exit 3, the
ledger's intent closed, no claim of billing); one whose request went out may exist, and is
settled by reading once the network is back, never created twice. Every message names the
backend, and the hand-check commands are that backend's."""

from __future__ import annotations

import dataclasses

import pytest

from tests.fakes import MemoryCloud
from tests.plans import changed
from tests.unit.test_launch_safety import make_plan, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.exit_codes import EXIT_CLOUD
from tpuwizard.core.launch.events.summary import RunSummary
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.by_hand import check_failed, list_command, manual_command
from tpuwizard.words.event_text import describe
from tpuwizard.words.summary_text import summary_lines

BACKENDS = {"tpu-api": ("v5litepod-1", "us-central1-a"), "compute": ("v6e-4", "us-east5-a")}
NAMES = {"tpu-api": "the Cloud TPU API", "compute": "Compute Engine"}


def launch(tmp_path, backend: str, faults: str, **fields):
    accelerator, zone = BACKENDS[backend]
    plan = changed(
        make_plan(tmp_path, accelerator=accelerator), zone=zone, backend=backend, **fields
    )
    cloud = MemoryCloud.faulty(faults, backend=backend)
    rt = make_runtime(tmp_path, cloud)
    events: list = []
    code = run_launch(plan, rt, events.append, CancelToken())
    summary = RunSummary()
    for e in events:
        summary.apply(e)
    lines = [line for e in events for line in describe(e, "cli")]
    text = "\n".join([*lines, *summary_lines(summary, "cli")])
    return code, events, text, cloud, Ledger(rt.ledger.path)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_create_that_made_no_connection_was_never_sent(tmp_path, backend):
    code, events, text, cloud, ledger = launch(tmp_path, backend, "refused_create=1")
    names = [type(e).__name__ for e in events]
    assert code == EXIT_CLOUD
    assert "CreateRefused" in names and "TeardownFailed" not in names
    assert cloud.nodes == {} and cloud.count("get_node") == 0  # nothing read over no network
    assert ledger.open_entries() == []  # status lists nothing
    assert [e.op for e in ledger.entries()] == ["gone"]
    assert f"Cannot reach {NAMES[backend]}" in text
    assert "may still be billing" not in text and "STILL BILLING" not in text
    assert "does not have" not in text  # the type is priced: its price is said


@pytest.mark.parametrize("fault", ["reset_create=1", "timeout_create=1"])
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_create_whose_answer_was_lost_on_the_network_is_found_not_made_twice(
    tmp_path, backend, fault
):
    _, events, _, cloud, ledger = launch(tmp_path, backend, fault)
    names = [type(e).__name__ for e in events]
    assert cloud.count("create_node") == 1 and "Ready" in names  # found by get, and used
    assert "CreateRefused" not in names
    assert ledger.open_entries() == [] and cloud.nodes == {}  # torn down, verified


def resource(backend: str, accelerator: str, kind: str = "node") -> Resource:
    zone = BACKENDS[backend][1]
    return Resource(kind, "p", zone, "tpu-a", accelerator, "r1", backend=backend)


def test_the_hand_check_commands_are_compute_engine_s_for_its_resources():
    vm = resource("compute", "v6e-4")
    assert list_command(vm) == (
        "gcloud compute instances list --filter=name=tpu-a --zones=us-east5-a --project p"
    )
    assert (
        manual_command(vm) == "gcloud compute instances delete tpu-a --zone us-east5-a --project p"
    )
    slice_ = resource("compute", "v6e-16")
    for command in (list_command(slice_), manual_command(slice_)):
        assert "tpus" not in command
        assert "instance-groups managed" in command and "tpu-a-it" in command
        assert "tpu-a-wp" in command and "us-east5" in command


def test_the_hand_check_commands_are_the_tpu_api_s_for_its_resources():
    node = resource("tpu-api", "v5litepod-1")
    assert list_command(node).startswith("gcloud compute tpus tpu-vm list --zone us-central1-a")
    assert manual_command(node).startswith("gcloud compute tpus tpu-vm delete tpu-a")
    queued = dataclasses.replace(node, kind="queued", name="tpu-a-qr")
    assert "queued-resources delete tpu-a-qr" in manual_command(queued)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_check_that_could_not_reach_the_backend_names_it_and_its_commands(backend):
    import requests

    accelerator = BACKENDS[backend][0]
    d = check_failed(requests.ConnectionError("Connection refused"), resource(backend, accelerator))
    assert d.title == f"Cannot reach {NAMES[backend]}"
    commands = " ".join(str(s) for s in d.next_steps)
    assert ("compute instances" in commands) is (backend == "compute")
    assert ("compute tpus" in commands) is (backend == "tpu-api")


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_create_that_may_have_landed_and_cannot_be_checked_is_may_exist_never_billing(
    tmp_path, backend
):
    # The answer lost on the way back, and nothing can be read after it (every read fails).
    _, events, text, _, ledger = launch(tmp_path, backend, "reset_create=1;read_error=40")
    failed = next(e for e in events if type(e).__name__ == "TeardownFailed")
    assert failed.seen is False and next(e for e in events if type(e).__name__ == "Finished").unseen
    assert "MAY EXIST: tpu-a" in text and "may exist" in text
    for claim in ("STILL BILLING", "may still be billing", "Still running and billing"):
        assert claim not in text, claim
    assert "does not have" not in text and "Cost: none seen" in text
    assert f"Cannot reach {NAMES[backend]}" in text
    assert [e.resource.name for e in ledger.open_entries()] == ["tpu-a"]  # status settles it
    tpus = "compute tpus" in text
    assert tpus is (backend == "tpu-api") and ("compute instances" in text) is (
        backend == "compute"
    )


def test_the_wizard_s_headline_says_may_exist_for_what_was_never_seen():
    from tpuwizard.core.launch.events import launch_events as ev
    from tpuwizard.tui.screens.summary import headline

    summary = RunSummary()
    summary.apply(ev.Finished(False, 4, "/runs/r1", None, ["tpu-a", "tpu-b"], None, ["tpu-b"]))
    assert headline(summary) == "STILL BILLING: tpu-a. MAY EXIST (never seen): tpu-b."


ROUTE_2B = {"route": "flex", "via": "resize-request"}  # the course's: template, MIG, request


def test_route_2b_s_hand_check_commands_are_its_request_mig_and_template():
    r2b = dataclasses.replace(resource("compute", "v6e-4"), **ROUTE_2B)
    delete, listed = manual_command(r2b), list_command(r2b)
    for command in (delete, listed):
        assert "tpus" not in command and "compute instances" not in command
        assert "resource-policies" not in command  # Route 2B has no workload policy
    assert "resize-requests cancel tpu-a --zone us-east5-a" in delete
    assert "resize-requests delete tpu-a" in delete and "--resize-requests=tpu-a-rr" in delete
    assert delete.index("resize-requests delete") < delete.index("instance-groups managed delete")
    assert "instance-templates delete tpu-a-it --region us-east5" in delete
    assert "resize-requests list tpu-a --zone=us-east5-a" in listed and "tpu-a-it" in listed


def test_route_2b_whose_create_made_no_connection_was_never_sent(tmp_path):
    code, events, text, cloud, ledger = launch(tmp_path, "compute", "refused_create=1", **ROUTE_2B)
    assert code == EXIT_CLOUD and "CreateRefused" in [type(e).__name__ for e in events]
    assert cloud.nodes == {} and cloud.count("get_node") == 0  # nothing read over no network
    assert ledger.open_entries() == [] and "Cannot reach Compute Engine" in text
    assert "may still be billing" not in text and "STILL BILLING" not in text


def test_route_2b_that_may_have_landed_names_its_own_hand_check_commands(tmp_path):
    _, _, text, _, ledger = launch(tmp_path, "compute", "reset_create=1;read_error=40", **ROUTE_2B)
    assert "MAY EXIST: tpu-a" in text and "STILL BILLING" not in text
    assert "resize-requests" in text and "instance-groups managed" in text
    assert "compute tpus" not in text and "compute instances delete" not in text
    assert [e.resource.via for e in ledger.open_entries()] == ["resize-request"]
