"""Two backends behind one session: each ledger record is asked only of the backend that made it,
every backend is surveyed, and a launch on Compute Engine makes one instance on every route.

The clouds are in-memory (tests/fakes.py); ``backend="compute"`` gives Compute Engine's shape
(no queued requests: spot and Flex-start are one instance whose scheduling says so)."""

from __future__ import annotations

import pytest
from google.api_core import exceptions as gx

from tests.fakes import MemoryCloud
from tests.unit.test_launch_safety import launch
from tpuwizard.core import paths
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.survey import reconcile_backends
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-central1-a"


class RecordingCloud(MemoryCloud):
    """Remembers each NodeRequest it was asked to create."""

    def __init__(self, **fields) -> None:
        super().__init__(**fields)
        self.requests: list[NodeRequest] = []

    def create_node(self, req: NodeRequest, on_part=None):
        self.requests.append(req)
        return super().create_node(req)


@pytest.mark.parametrize("route", ["vm", "spot", "flex"])
def test_a_compute_engine_launch_makes_one_instance_with_its_route_and_deadline(tmp_path, route):
    cloud = RecordingCloud(backend="compute")
    out = launch(tmp_path, cloud, route)
    (req,) = cloud.requests  # never a queued request: one instance, whatever the route
    assert cloud.queued == {} and req.node_id == "tpu-a"
    assert req.route == route and req.max_run_s == {"vm": 120, "spot": 120, "flex": 240}[route] * 60
    made = {e.resource for e in out.ledger.entries()}
    assert {(r.kind, r.name, r.backend) for r in made} == {("node", "tpu-a", "compute")}


def test_the_tpu_api_still_queues_spot_and_records_its_backend(tmp_path):
    out = launch(tmp_path, MemoryCloud(), "spot")
    made = {e.resource for e in out.ledger.entries()}
    assert {(r.kind, r.name, r.backend) for r in made} == {("queued", "tpu-a-qr", "tpu-api")}


def _made_on(cloud: MemoryCloud, ledger: Ledger, name: str) -> Resource:
    me = paths.owner_label()
    cloud.create_node(NodeRequest(ZONE, name, parse_accelerator("v6e-4"), "run-1", owner=me))
    resource = Resource(
        "node", cloud.project, ZONE, name, "v6e-4", "run-1", owner=me, backend=cloud.backend
    )
    ledger.record("created", resource)
    return resource


def test_a_compute_record_is_never_called_gone_because_the_tpu_api_does_not_know_it(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    tpu, compute = MemoryCloud(), MemoryCloud(backend=Backend.COMPUTE)
    _made_on(compute, ledger, "on-compute")
    _made_on(tpu, ledger, "on-tpu")
    found = reconcile_backends(
        [("tpu-api", lambda: tpu), ("compute", lambda: compute)],
        ledger,
        [ZONE],
        paths.owner_label(),
    )
    listed = {(b.resource.name, b.resource.backend) for b in found}
    assert listed == {("on-compute", "compute"), ("on-tpu", "tpu-api")}
    assert {e.resource.name for e in Ledger(ledger.path).open_entries()} == {
        "on-compute",
        "on-tpu",
    }  # neither was recorded gone by the other backend's "not found"


class UnlistableCloud(MemoryCloud):
    def list_zones(self) -> list[str]:
        raise gx.Forbidden("Compute Engine API has not been used in project practice-project")

    def list_nodes(self, zone, labels=None):
        raise gx.Forbidden("Compute Engine API has not been used in project practice-project")


def test_a_backend_that_cannot_be_surveyed_is_one_line_and_the_other_still_counts(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    tpu = MemoryCloud()
    _made_on(tpu, ledger, "on-tpu")
    found = reconcile_backends(
        [("tpu-api", lambda: tpu), ("compute", lambda: UnlistableCloud(backend=Backend.COMPUTE))],
        ledger,
        [ZONE],
        paths.owner_label(),
    )
    assert [b.resource.name for b in found] == ["on-tpu"]
    assert list(found.skipped) == ["Compute Engine"]


def test_nothing_surveyable_is_an_error_not_an_empty_answer(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    with pytest.raises(gx.Forbidden):
        reconcile_backends([("compute", lambda: UnlistableCloud(backend=Backend.COMPUTE))], ledger)


def test_teardown_deletes_through_the_backend_that_made_it(tmp_path):
    session = Session(practice=True, project="practice-project")
    tpu, compute = MemoryCloud(), MemoryCloud(backend=Backend.COMPUTE)
    session.clouds.use(tpu, compute)
    resource = _made_on(compute, session.ledger, "on-compute")
    (result,) = session.delete([resource])
    assert result.verified and (ZONE, "on-compute") not in compute.nodes
    assert [c.method for c in tpu.calls] == []  # the TPU API was never asked
    assert session.clouds.surveyed() == ("tpu-api", "compute")


def test_status_deletes_a_compute_vm_google_stopped_and_says_so(monkeypatch):
    from dataclasses import replace

    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.commands import cleanup

    session = Session(practice=True, project="practice-project")
    tpu, compute = MemoryCloud(), MemoryCloud(backend=Backend.COMPUTE)
    session.clouds.use(tpu, compute)
    monkeypatch.setattr(cleanup, "open_session", lambda project, sandbox: session)
    _made_on(compute, session.ledger, "stopped-vm")
    key = (ZONE, "stopped-vm")
    compute.nodes[key] = replace(compute.nodes[key], state="TERMINATED")  # Google stopped it
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert "stopped-vm was stopped by Google" in result.stderr
    assert "verified gone" in result.stderr
    assert key not in compute.nodes and "stopped-vm" not in result.stdout
    assert Ledger(session.ledger.path).open_entries() == []


def test_a_running_compute_vm_is_listed_not_deleted(monkeypatch):
    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.commands import cleanup

    session = Session(practice=True, project="practice-project")
    compute = MemoryCloud(backend=Backend.COMPUTE)
    session.clouds.use(compute)
    monkeypatch.setattr(cleanup, "open_session", lambda project, sandbox: session)
    _made_on(compute, session.ledger, "busy-vm")
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 0, result.output
    assert "busy-vm" in result.stdout and "compute" in result.stdout
    assert (ZONE, "busy-vm") in compute.nodes


def test_teardown_json_says_which_backend_each_result_was_on(monkeypatch):
    import json

    from click.testing import CliRunner

    from tpuwizard.cli import main
    from tpuwizard.commands import cleanup

    session = Session(practice=True, project="practice-project")
    compute = MemoryCloud(backend=Backend.COMPUTE)
    session.clouds.use(compute)
    monkeypatch.setattr(cleanup, "open_session", lambda project, sandbox: session)
    _made_on(compute, session.ledger, "vm-a")
    result = CliRunner().invoke(main, ["teardown", "vm-a", "--sandbox", "--yes", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["results"]
    assert (row["name"], row["backend"], row["verified"]) == ("vm-a", "compute", True)


def test_no_compute_engine_call_at_all_until_the_ledger_holds_a_compute_engine_record():
    from tpuwizard.session.clouds import CloudBook

    session = Session(practice=True, project="practice-project")
    opened: list[str] = []
    clouds = {"tpu-api": MemoryCloud(), "compute": MemoryCloud(backend=Backend.COMPUTE)}

    def open_cloud(backend: str) -> MemoryCloud:
        opened.append(backend)  # opening is the first thing a survey of a backend does
        return clouds[backend]

    session.clouds = CloudBook(open_cloud)
    elsewhere = Resource("node", "other-project", ZONE, "vm", "v6e-4", "r0", backend="compute")
    session.ledger.record("created", elsewhere)  # another project's: not this one's survey
    session.find_leftovers()
    assert opened == ["tpu-api"]
    gone = Resource("node", "practice-project", ZONE, "old-vm", "v6e-4", "r1", backend="compute")
    session.ledger.record("gone", gone)  # made here once: Compute Engine is surveyed again
    me = paths.owner_label()
    clouds["compute"].create_node(
        NodeRequest(ZONE, "labelled", parse_accelerator("v6e-4"), "r2", owner=me)
    )
    found = session.find_leftovers()
    assert opened == ["tpu-api", "compute"] and [b.resource.name for b in found] == ["labelled"]
