"""A cloud that surveys every zone in one go (Compute Engine's aggregated lists) is asked that,
never for its zones nor a zone at a time; what it could not reach is skipped (not checked, so
never "nothing there"), a zone it listed alone and that refused is diagnosed as zone by zone."""

from __future__ import annotations

from google.api_core import exceptions

from tests.fakes import MemoryCloud
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.protocol import Surveyed
from tpuwizard.core.cloud.types import MANAGED_BY, OWNER_LABEL, NodeInfo
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.verified import reconcile

OURS = NodeInfo("tpu-a", "us-east5-a", "v6e-4", "RUNNING", {**MANAGED_BY, OWNER_LABEL: "me"})


class Everywhere(MemoryCloud):
    def survey_everywhere(self, labels: dict[str, str]) -> Surveyed:
        assert labels == MANAGED_BY
        refused = exceptions.Forbidden(
            "Location us-central1-ai1a is not found or access is unauthorized."
        )
        return Surveyed(
            {"us-east5-a": [OURS]},
            {"us-west4-a": "Scope 'zones/us-west4-a' is unreachable."},
            {"us-central1-ai1a": refused},
        )

    def list_zones(self) -> list[str]:
        raise AssertionError("no list of zones: the survey reads every zone at once")

    def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
        raise AssertionError(f"no zone listed alone ({zone})")


def test_the_survey_everywhere_is_asked_and_what_it_could_not_read_is_skipped(tmp_path):
    found = reconcile(Everywhere(backend=Backend.COMPUTE), Ledger(tmp_path / "l.jsonl"), owner="me")
    assert [(b.resource.name, b.resource.zone, b.mine) for b in found] == [
        ("tpu-a", "us-east5-a", True)
    ]
    assert set(found.skipped) == {"us-west4-a", "us-central1-ai1a"}
    assert "not checked" in found.skipped["us-west4-a"]
    assert found.refused == {"us-central1-ai1a"}  # Google's refusal: said once, not a problem


def test_zones_named_keep_the_survey_to_them(tmp_path):
    cloud = Everywhere(backend=Backend.COMPUTE)
    found = reconcile(cloud, Ledger(tmp_path / "l.jsonl"), ["us-west4-a"], owner="me")
    assert list(found) == [] and set(found.skipped) == {"us-west4-a"}
