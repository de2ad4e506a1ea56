"""The leftover check and `status` ask both backends at once: Compute Engine's client library
takes seconds to import, and the TPU API's survey need not wait for it (issue 31, item 8)."""

from __future__ import annotations

import threading

from tests.fakes import MemoryCloud
from tpuwizard.core import paths
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.launch.teardown.survey import reconcile_backends
from tpuwizard.session.clouds import CloudBook


def test_the_backends_are_surveyed_at_once(tmp_path):
    tpu_asked = threading.Event()

    class TpuApi(MemoryCloud):
        def list_zones(self) -> list[str]:
            tpu_asked.set()
            return super().list_zones()

    def open_compute() -> MemoryCloud:
        # One after the other, the TPU API would be asked only once this had returned.
        if not tpu_asked.wait(10):
            raise TimeoutError("the TPU API was not asked while Compute Engine opened")
        return MemoryCloud(backend="compute")

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
        return MemoryCloud(backend=backend)

    book = CloudBook(open_cloud)
    opened: list[str] = []
    compute = threading.Thread(target=book.get, args=("compute",))
    tpu = threading.Thread(target=lambda: opened.append(book.get("tpu-api").backend))
    compute.start()
    try:
        assert compute_opening.wait(10)
        tpu.start()
        tpu.join(10)
        assert opened == ["tpu-api"]  # while Compute Engine is still opening
    finally:
        compute_may_open.set()
        compute.join(10)
        tpu.join(10)
    assert book.get("compute").backend == "compute"
