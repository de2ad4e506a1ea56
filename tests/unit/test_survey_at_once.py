"""The leftover check and `status` ask both backends at once: Compute Engine's client library
takes seconds to import, and the TPU API's survey need not wait for it (issue 31, item 8). And
each backend's records: a record's get beside its "verified gone" reads, the zones at once."""

from __future__ import annotations

import threading

from tests.fakes import MemoryCloud
from tpuwizard.core import paths
from tpuwizard.core.cloud.ai_zones import with_ai_zones
from tpuwizard.core.cloud.backends import Backend
from tpuwizard.core.cloud.types import NodeInfo
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.survey import reconcile_backends
from tpuwizard.core.launch.teardown.verified import reconcile
from tpuwizard.sandbox.google import FORBIDDEN_ZONES
from tpuwizard.session.clouds import CloudBook


def test_the_backends_are_surveyed_at_once(tmp_path):
    tpu_asked = threading.Event()

    class TpuApi(MemoryCloud):
        def list_zones(self) -> list[str]:
            tpu_asked.set()
            return super().list_zones()

    def open_compute() -> MemoryCloud:
        # One after the other, the TPU API would be asked only once this had returned.
        if not tpu_asked.wait(60):
            raise TimeoutError("the TPU API was not asked while Compute Engine opened")
        return MemoryCloud(backend=Backend.COMPUTE)

    found = reconcile_backends(
        [("compute", open_compute), ("tpu-api", TpuApi)],
        Ledger(tmp_path / "ledger.jsonl"),
        owner=paths.owner_label(),
    )
    assert "Compute Engine" not in found.skipped  # opened, and surveyed


def test_one_backend_opening_never_holds_up_the_other():
    compute_may_open, compute_opening = threading.Event(), threading.Event()

    def open_cloud(backend: str) -> MemoryCloud:
        if backend == "compute":
            compute_opening.set()
            compute_may_open.wait(30)
        return MemoryCloud(backend=Backend(backend))

    book = CloudBook(open_cloud)
    opened: list[str] = []
    compute = threading.Thread(target=book.get, args=("compute",))
    tpu = threading.Thread(target=lambda: opened.append(book.get("tpu-api").backend))
    compute.start()
    try:
        assert compute_opening.wait(60)
        tpu.start()
        tpu.join(60)
        assert opened == ["tpu-api"]  # while Compute Engine is still opening
    finally:
        compute_may_open.set()
        compute.join(60)
        tpu.join(60)
    assert book.get("compute").backend == "compute"


class AskedTogether(MemoryCloud):
    """A cloud whose record reads (``get_node``) answer only once every read in ``together``
    has been asked for: asked one after another, the first would wait for the last in vain."""

    def __init__(self, together: set[str]) -> None:
        super().__init__()
        self.together, self.asked = together, set[str]()
        self.all_asked = threading.Condition()

    def _ask(self, what: str) -> None:
        with self.all_asked:
            self.asked.add(what)
            self.all_asked.notify_all()

    def get_node(self, zone: str, node_id: str) -> NodeInfo | None:
        self._ask(f"get {zone}")
        with self.all_asked:
            if not self.all_asked.wait_for(lambda: self.together <= self.asked, timeout=10):
                raise TimeoutError(f"asked one after another: {sorted(self.asked)}")
        return super().get_node(zone, node_id)

    def node_gone(self, zone: str, node_id: str) -> bool:
        self._ask(f"gone {zone}")
        return super().node_gone(zone, node_id)


def record_gone_node(ledger: Ledger, zone: str, name: str) -> Resource:
    """An open record of a node the cloud no longer has (a run killed after its create)."""
    resource = Resource("node", "practice-project", zone, name, "v5litepod-4", "r1")
    ledger.record("intent", resource)
    ledger.record("created", resource)
    return resource


def test_a_record_is_verified_gone_in_one_round_trip(tmp_path):
    # Whether it is gone (a get and the zone's list) is asked beside the record's own get, not
    # after its NotFound: at 200 ms a request, that is 0.2 s of the leftover check.
    ledger = Ledger(tmp_path / "ledger.jsonl")
    resource = record_gone_node(ledger, "us-central1-a", "tpuwizard-old")
    cloud = AskedTogether({"get us-central1-a", "gone us-central1-a"})
    found = reconcile(cloud, ledger, zones=[], owner=paths.owner_label())
    assert found.unchecked == [] and list(found) == []
    assert [e.op for e in ledger.entries() if e.resource.key == resource.key][-1] == "gone"


def test_records_in_different_zones_are_checked_at_once(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl")
    for zone in ("us-central1-a", "europe-west4-a"):
        record_gone_node(ledger, zone, f"tpuwizard-old-{zone}")
    cloud = AskedTogether({"get us-central1-a", "get europe-west4-a"})
    found = reconcile(cloud, ledger, zones=[], owner=paths.owner_label())
    assert found.unchecked == [] and ledger.open_entries() == []


def test_a_refusing_zone_is_asked_once_for_its_records(tmp_path):
    # Its records wait for the zone's first answer, as before: one refusal, every record of
    # that zone unchecked with it, and the other zone's record still checked.
    ledger = Ledger(tmp_path / "ledger.jsonl")
    refusing = FORBIDDEN_ZONES[0]  # Google answers 403 for it (google-behaviour.md)
    refused = [record_gone_node(ledger, refusing, f"tpuwizard-{n}") for n in (1, 2)]
    record_gone_node(ledger, "europe-west4-a", "tpuwizard-3")
    cloud = MemoryCloud()
    found = reconcile(cloud, ledger, zones=[], owner=paths.owner_label())
    assert [u.resource.key for u in found.unchecked] == [r.key for r in refused]
    asked = {c.name for c in cloud.calls if c.zone == refusing and c.name.startswith("tpuwizard")}
    assert asked == {"tpuwizard-1"}
    assert [e.resource.zone for e in ledger.open_entries()] == [refusing] * 2


def test_every_zone_of_the_survey_by_label_is_asked_at_once(tmp_path):
    """With fewer threads than zones, the last zones waited for the first to answer: one round
    trip more at 200 ms a request (status traced at 20 zones: a third wave of requests)."""
    zones = [f"us-test{i}-a" for i in range(24)]
    all_asked = threading.Barrier(len(with_ai_zones(zones)), timeout=10)  # the AI zones too

    class ManyZones(MemoryCloud):
        def list_zones(self) -> list[str]:
            return zones

        def list_queued(self, zone: str) -> list:
            all_asked.wait()  # answers only once every zone has been asked
            return []

        def list_nodes(self, zone: str, labels: dict[str, str] | None = None) -> list[NodeInfo]:
            return []

    found = reconcile(ManyZones(), Ledger(tmp_path / "ledger.jsonl"), owner="me")
    assert found.skipped == {}  # no zone's answer waited for another's
