"""A backend that cannot be read as a whole (issue 39, item 3): its ledger records are listed as
unchecked, as a refused zone's are (``status`` exits 3, ``teardown`` 4), never taken for gone,
and no line says "nothing can be there" or "nothing of yours is billing".

The clouds are in-memory (tests/fakes.py); an unreachable one raises what the REST client raises
when nothing answers (a ConnectionError) on every call."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.fakes import MemoryCloud
from tpuwizard.core import paths
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.types import NodeRequest
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.survey import reconcile_backends
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.session.session import Session

ZONE = "us-east5-a"


class UnreachableCloud(MemoryCloud):
    """Every call fails as the client does when the API's host does not answer."""

    def _request(self, method, zone, name, http, body=None):
        raise ConnectionError(f"Failed to establish a new connection ({method})")


def _made_on(cloud: MemoryCloud, ledger: Ledger, name: str) -> Resource:
    """A node of ``cloud``'s backend, made and recorded as tpuwizard makes one."""
    me = paths.owner_label()
    cloud.create_node(NodeRequest(ZONE, name, parse_accelerator("v6e-1"), "run-1", owner=me))
    resource = Resource(
        "node", cloud.project, ZONE, name, "v6e-1", "run-1", owner=me, backend=cloud.backend
    )
    ledger.record("created", resource)
    return resource


@pytest.mark.parametrize("down", ["tpu-api", "compute"])
def test_a_record_of_a_backend_that_cannot_be_read_is_unchecked_not_gone(tmp_path, down):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    up = Backend.COMPUTE if down == "tpu-api" else Backend.TPU_API
    reachable = MemoryCloud(backend=up)
    # The record was made while its backend answered; now it does not.
    made = _made_on(MemoryCloud(backend=down), ledger, "kept-one")
    found = reconcile_backends(
        [(down, lambda: UnreachableCloud(backend=down)), (up, lambda: reachable)],
        ledger,
        [ZONE],
        paths.owner_label(),
        project=made.project,
    )
    assert list(found) == []
    assert [u.resource.name for u in found.unchecked] == ["kept-one"]
    (unchecked,) = found.unchecked
    assert unchecked.diagnosis.kind == "unreachable"
    expected = "Compute Engine" if down == "compute" else "the Cloud TPU API"
    assert unchecked.diagnosis.title == f"Cannot reach {expected}"
    assert [e.resource.name for e in Ledger(ledger.path).open_entries()] == ["kept-one"]


def test_both_backends_unreachable_with_records_list_them_all_unchecked(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    _made_on(MemoryCloud(), ledger, "on-tpu")
    _made_on(MemoryCloud(backend=Backend.COMPUTE), ledger, "on-compute")
    found = reconcile_backends(
        [
            ("tpu-api", lambda: UnreachableCloud()),
            ("compute", lambda: UnreachableCloud(backend=Backend.COMPUTE)),
        ],
        ledger,
        [ZONE],
        paths.owner_label(),
    )
    assert sorted(u.resource.name for u in found.unchecked) == ["on-compute", "on-tpu"]
    assert sorted(found.skipped) == ["Compute Engine", "TPU API"]


def test_another_projects_record_is_not_said_unchecked(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    _made_on(MemoryCloud(backend=Backend.COMPUTE, project="other-project"), ledger, "elsewhere")
    found = reconcile_backends(
        [("tpu-api", MemoryCloud), ("compute", lambda: UnreachableCloud(backend=Backend.COMPUTE))],
        ledger,
        [ZONE],
        project="practice-project",
    )
    assert found.unchecked == [] and list(found.skipped) == ["Compute Engine"]


def _session_with_compute_down(monkeypatch) -> Session:
    from tpuwizard.commands import cleanup

    session = Session(practice=True, project="practice-project")
    _made_on(MemoryCloud(backend=Backend.COMPUTE), session.ledger, "ce1")
    session.clouds.use(MemoryCloud(), UnreachableCloud(backend=Backend.COMPUTE))
    monkeypatch.setattr(cleanup, "open_session", lambda project, sandbox: session)
    return session


def test_status_with_compute_engine_unreachable_exits_3_and_names_the_record(monkeypatch):
    from tpuwizard.cli import main

    _session_with_compute_down(monkeypatch)
    result = CliRunner().invoke(main, ["status", "--sandbox"])
    assert result.exit_code == 3, result.output
    assert "nothing of yours is billing" not in result.output
    assert "Could not check ce1 in us-east5-a: Cannot reach Compute Engine" in result.stderr
    assert "gcloud compute instances delete ce1" in result.stderr  # not a TPU API command
    assert "Nothing tpuwizard made can be there" not in result.stderr


def test_teardown_all_with_compute_engine_unreachable_exits_4_and_keeps_the_record(monkeypatch):
    from tpuwizard.cli import main

    session = _session_with_compute_down(monkeypatch)
    result = CliRunner().invoke(main, ["teardown", "--all", "--yes", "--sandbox"])
    assert result.exit_code == 4, result.output
    assert "Nothing to delete" not in result.stderr
    assert "Could not check ce1" in result.stderr
    assert [e.resource.name for e in Ledger(session.ledger.path).open_entries()] == ["ce1"]
