"""Never touch what is not ours (issue 17, items 1-3 and 6), each case on its own."""

from __future__ import annotations

from google.api_core import exceptions as gx

from tests.fakes import FakeTransport, MemoryCloud, foreign_node, proven_workers
from tests.plans import launch_plan
from tpuwizard.core.cloud.types import OWNER_LABEL, RUN_LABEL, NodeRequest
from tpuwizard.core.errors import RemoteError
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.ledger import Ledger, Resource
from tpuwizard.core.launch.teardown.verified import delete_and_verify, reconcile
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.bootstrap import BootstrapPlan

ZONE, PROJECT, OURS = "us-central1-a", "my-project", "0123456789abcdef"


def unreachable(node: object) -> object:
    raise RemoteError("the workers cannot be reached (the test stops here)")


def launch(tmp_path, cloud, ledger, run_id="run-2", reach=unreachable, **plan_fields):
    rt = Runtime(cloud, ledger, reach, BootstrapPlan(), poll=0.0, owner=OURS)
    plan = launch_plan("v5litepod-4", ZONE, PROJECT, run_id, tmp_path / run_id, **plan_fields)
    seen: list[ev.Event] = []
    code = run_launch(plan, rt, seen.append)
    return code, seen


class FailsReadsAfterConflict(MemoryCloud):
    """The create answers 409 and the next read fails once (a 500): item 2's interleaving."""

    failed_once = False

    def get_node(self, zone, node_id):
        if self.conflicted and not self.failed_once:
            self.failed_once = True
            raise gx.InternalServerError("one read fails")
        return super().get_node(zone, node_id)

    conflicted = False

    def create_node(self, req, on_part=None):
        try:
            return super().create_node(req)
        except gx.Conflict:
            self.conflicted = True
            raise


def test_a_409_on_a_hand_made_node_never_deletes_it_even_when_the_next_read_fails(tmp_path):
    cloud = FailsReadsAfterConflict(project=PROJECT)
    theirs = foreign_node(ZONE, "shared-name", {})  # made by hand, no labels
    cloud.add(theirs)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    code, seen = launch(tmp_path, cloud, ledger, name="shared-name")
    assert cloud.failed_once, "the interleaving under test did not happen"
    assert cloud.deleted == [] and cloud.nodes[(ZONE, "shared-name")] is theirs
    assert code == 3
    assert any(isinstance(e, ev.CreateRefused) for e in seen)
    assert not any(isinstance(e, ev.TeardownStarted) for e in seen)
    assert ev.Finished in {type(e) for e in seen}
    assert seen[-1].remaining == []  # type: ignore[attr-defined]


def test_a_spot_launch_on_the_name_of_a_kept_request_leaves_it_and_its_record_alone(
    tmp_path, monkeypatch
):
    proven_workers(monkeypatch)  # the first launch is set up and verified: it keeps its request
    cloud = MemoryCloud(project=PROJECT)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    reached = lambda node: FakeTransport(len(node.endpoints))  # noqa: E731
    code, _ = launch(
        tmp_path,
        cloud,
        ledger,
        "run-1",
        reached,
        name="mine",
        route="spot",
        deadline=Deadline(keep=True),
    )
    kept = cloud.queued[(ZONE, "mine-qr")]
    code, seen = launch(tmp_path, cloud, ledger, "run-2", name="mine", route="spot")
    assert code == 3
    assert cloud.deleted == [] and cloud.queued[(ZONE, "mine-qr")] is kept
    ops = {(e.resource.run_id, e.op) for e in ledger.entries()}
    assert ("run-1", "kept") in ops, "the kept request's record must still say kept"
    # The name was asked about first and found taken: nothing was requested, so no record.
    assert not any(run == "run-2" for run, _op in ops)
    assert not any(isinstance(e, ev.TeardownStarted) for e in seen)


def test_a_lost_create_answer_for_our_own_node_is_recognised_by_its_labels(tmp_path):
    cloud = MemoryCloud.faulty("lost_create=1", project=PROJECT)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    _code, seen = launch(tmp_path, cloud, ledger, name="mine")
    assert cloud.faults.counters["lost_create"] == 0, "the answer was not lost"
    # The create went through although its answer was lost: ours, used and torn down.
    assert any(isinstance(e, ev.TeardownVerified) for e in seen)
    assert [d.name for d in cloud.deleted] == ["mine"]
    assert {e.op for e in ledger.entries()} == {"gone"}


def test_teardown_of_a_record_whose_name_another_run_holds_deletes_nothing(tmp_path):
    cloud = MemoryCloud(project=PROJECT)
    live = foreign_node(ZONE, "x", {RUN_LABEL: "run-1", OWNER_LABEL: OURS})
    cloud.add(live)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    stale = Resource("node", PROJECT, ZONE, "x", "v5litepod-4", "run-2", owner=OURS)
    ledger.record("intent", stale)
    result = delete_and_verify(cloud, ledger, stale, pause=0)  # type: ignore[arg-type]
    assert result.verified and result.held_by and "run-1" in result.held_by
    assert cloud.deleted == [] and cloud.nodes[(ZONE, "x")] is live
    (entry,) = ledger.entries()
    assert entry.op == "gone" and entry.resource.run_id == "run-2"


def test_teardown_that_cannot_read_the_labels_deletes_nothing(tmp_path):
    cloud = MemoryCloud.faulty("read_error=1000", project=PROJECT)
    cloud.add(foreign_node(ZONE, "x", {}))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    stale = Resource("node", PROJECT, ZONE, "x", "v5litepod-4", "run-2", owner=OURS)
    ledger.record("intent", stale)
    result = delete_and_verify(cloud, ledger, stale, attempts=2, pause=0)  # type: ignore[arg-type]
    assert not result.verified and cloud.deleted == []
    assert ledger.open_entries(), "unverified: the record stays open for status"


def test_reconcile_shows_other_owners_apart_and_settles_records_whose_name_is_taken(tmp_path):
    cloud = MemoryCloud(project=PROJECT)
    mine = NodeRequest(ZONE, "mine", parse_accelerator("v5litepod-4"), "run-1", owner=OURS)
    alice = NodeRequest(
        ZONE, "alices", parse_accelerator("v5litepod-4"), "run-a", owner="a11ce0000000000a"
    )
    cloud.create_node(mine)
    cloud.create_node(alice)
    cloud.add(foreign_node(ZONE, "by-hand", {}))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    old = Resource("node", PROJECT, ZONE, "alices", "v5litepod-4", "run-0", owner=OURS)
    ledger.record("created", old)  # we once had that name; Alice holds it now
    found = reconcile(cloud, ledger, [ZONE], owner=OURS)  # type: ignore[arg-type]
    assert [b.resource.name for b in found] == ["mine"]
    assert [(b.resource.name, b.mine, b.resource.owner) for b in found.others] == [
        ("alices", False, "a11ce0000000000a")
    ]
    assert {e.resource.run_id: e.op for e in ledger.entries()} == {"run-0": "gone"}


def test_every_request_carries_the_owner_label():
    req = NodeRequest(ZONE, "n", parse_accelerator("v5litepod-4"), "run-1", owner=OURS)
    assert req.labels == {"managed-by": "tpuwizard", RUN_LABEL: "run-1", OWNER_LABEL: OURS}


def test_the_owner_label_is_label_safe_stable_and_made_once(home):
    import re
    from concurrent.futures import ThreadPoolExecutor

    from tpuwizard.core import paths

    with ThreadPoolExecutor(8) as pool:
        labels = set(pool.map(lambda _: paths.owner_label(), range(16)))
    (label,) = labels
    assert re.fullmatch(r"[a-z0-9_-]{1,63}", label)
    assert paths.owner_label() == label
    assert not list(home.glob(".install-id.*")), "no temporary file is left behind"
