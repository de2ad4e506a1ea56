"""The launch's money safety with an in-memory cloud and workers, through ``run_launch``.

The workers answer but run nothing, so every launch here reaches its node, fails its first job
and tears down: enough to watch the ledger around each cloud call.
"""

from dataclasses import dataclass

import pytest

from tests.fakes import FakeTransport, MemoryCloud
from tests.plans import launch_plan
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_FAILED, EXIT_TEARDOWN
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.runtime import Runtime
from tpuwizard.core.launch.plan.parts import Deadline
from tpuwizard.core.launch.records.ledger import Ledger
from tpuwizard.core.plan.catalog import parse_accelerator
from tpuwizard.core.remote.bootstrap import sandbox_plan

ZONE = "us-central1-a"
RUN = "20261129-152500-ab12"


def make_plan(tmp_path, route="vm", accelerator="v5litepod-1"):
    return launch_plan(
        accelerator=accelerator,
        zone=ZONE,
        project="practice-project",
        run_id=RUN,
        run_dir=tmp_path / "runs" / RUN,
        route=route,
        name="tpu-a",
    )


def make_runtime(tmp_path, cloud, transports=None):
    made = transports if transports is not None else []

    def transport(node):
        made.append(FakeTransport(len(node.endpoints)))
        return made[-1]

    return Runtime(
        cloud=cloud,
        ledger=Ledger(tmp_path / "state" / "ledger.jsonl"),
        make_transport=transport,
        bootstrap=sandbox_plan(),
        expect="cpu",
        practice=True,
        poll=0.01,
        ready_timeout=5,
        reachable_timeout=1,
    )


@dataclass
class Outcome:
    code: int
    events: list
    ledger: Ledger  # a fresh one, reading the file

    @property
    def names(self) -> list[str]:
        return [type(e).__name__ for e in self.events]


def launch(tmp_path, cloud, route="vm", cancel=None) -> Outcome:
    plan, rt = make_plan(tmp_path, route), make_runtime(tmp_path, cloud)
    events: list[ev.Event] = []
    code = run_launch(plan, rt, events.append, cancel or CancelToken())
    return Outcome(code, events, Ledger(rt.ledger.path))


def on_disk(tmp_path):
    """The ledger as a restarted tpuwizard would read it: a fresh object, from the file."""
    return [
        (e.resource.name, e.resource.run_id, e.op) for e in Ledger(ledger_path(tmp_path)).entries()
    ]


def ledger_path(tmp_path):
    return tmp_path / "state" / "ledger.jsonl"


@pytest.mark.parametrize(("route", "name"), [("vm", "tpu-a"), ("spot", "tpu-a-qr")])
def test_the_intent_is_on_disk_before_the_create_call(tmp_path, route, name):
    cloud = MemoryCloud()
    seen_at_create = []
    cloud.on_create = lambda zone, created: seen_at_create.append(on_disk(tmp_path))
    out = launch(tmp_path, cloud, route)
    assert seen_at_create == [[(name, RUN, "intent")]]
    assert out.code == EXIT_FAILED  # the workers run nothing: the launch fails after its create
    assert "Ready" in out.names
    assert [(e.resource.name, e.op) for e in out.ledger.entries()] == [(name, "gone")]


def test_gone_is_recorded_only_after_a_verified_delete(tmp_path):
    cloud = MemoryCloud()
    seen_at_delete = []
    cloud.on_delete = lambda zone, name: seen_at_delete.append(on_disk(tmp_path))
    out = launch(tmp_path, cloud)
    assert seen_at_delete == [[("tpu-a", RUN, "created")]]
    assert on_disk(tmp_path) == [("tpu-a", RUN, "gone")]
    assert cloud.nodes == {}
    assert "TeardownVerified" in out.names and "TeardownFailed" not in out.names


def test_a_lying_delete_is_retried_and_gone_waits_for_the_truth(tmp_path):
    cloud = MemoryCloud.faulty("lying_delete=1")
    seen_at_delete = []
    cloud.on_delete = lambda zone, name: seen_at_delete.append(on_disk(tmp_path))
    out = launch(tmp_path, cloud)
    assert cloud.count("delete_node") == 2
    assert seen_at_delete == [[("tpu-a", RUN, "created")]] * 2
    assert on_disk(tmp_path) == [("tpu-a", RUN, "gone")]
    assert cloud.nodes == {}
    assert out.code == EXIT_FAILED


def test_a_delete_that_never_takes_is_a_teardown_failure_and_stays_open(tmp_path):
    cloud = MemoryCloud.faulty("lying_delete=100")
    out = launch(tmp_path, cloud)
    assert out.code == EXIT_TEARDOWN
    assert "TeardownFailed" in out.names and "TeardownVerified" not in out.names
    assert on_disk(tmp_path) == [("tpu-a", RUN, "created")]
    assert [e.resource.name for e in out.ledger.open_entries()] == ["tpu-a"]
    assert list(cloud.nodes) == [(ZONE, "tpu-a")]  # it still exists, and the ledger says so


@pytest.mark.parametrize(
    ("route", "create", "get"),
    [("vm", "create_node", "get_node"), ("spot", "create_queued", "get_queued")],
)
def test_a_lost_create_answer_is_resolved_by_get_and_not_created_twice(
    tmp_path, route, create, get
):
    cloud = MemoryCloud.faulty("lost_create=1")
    out = launch(tmp_path, cloud, route)
    assert cloud.count(create) == 1
    methods = [c.method for c in cloud.calls]
    assert get in methods[methods.index(create) + 1 :]  # it asked before deciding
    assert "Ready" in out.names  # the launch went on with the node that exists
    assert out.code == EXIT_FAILED  # (the in-memory workers run nothing)
    assert [e.op for e in out.ledger.entries()] == ["gone"] and cloud.nodes == {}


def test_a_503_with_nothing_created_is_retried_once_get_shows_nothing(tmp_path):
    cloud = MemoryCloud.faulty("unavailable=1")
    out = launch(tmp_path, cloud)
    assert cloud.count("create_node") == 2
    assert "Ready" in out.names
    assert [e.op for e in out.ledger.entries()] == ["gone"] and cloud.nodes == {}


def test_another_runs_node_with_the_same_name_is_not_taken_for_ours(tmp_path):
    from tpuwizard.core.cloud.types import NodeRequest

    cloud = MemoryCloud()
    cloud.create_node(
        NodeRequest(ZONE, "tpu-a", parse_accelerator("v5litepod-1"), "an-earlier-run")
    )
    out = launch(tmp_path, cloud)
    assert out.code == EXIT_CLOUD
    assert cloud.count("delete_node") == 0  # not ours: never deleted by this launch
    assert cloud.nodes[(ZONE, "tpu-a")].labels["tpuwizard-run"] == "an-earlier-run"
    assert on_disk(tmp_path) == [("tpu-a", RUN, "gone")]  # this run's instance never existed


def test_a_cancel_once_the_node_is_ready_tears_it_down(tmp_path):
    cloud = MemoryCloud()
    cancel = CancelToken()
    cloud.on_create = lambda zone, name: cancel.set("test")
    out = launch(tmp_path, cloud, cancel=cancel)
    assert out.code == EXIT_FAILED
    assert on_disk(tmp_path) == [("tpu-a", RUN, "gone")] and cloud.nodes == {}


def keep_launch(tmp_path, cloud, cancel, route="vm"):
    """A launch whose plan says keep (``up``, ``launch --keep``)."""
    from dataclasses import replace

    plan = replace(make_plan(tmp_path, route), deadline=Deadline(keep=True))
    events: list = []
    code = run_launch(plan, make_runtime(tmp_path, cloud), events.append, cancel)
    return code, [type(e).__name__ for e in events]


@pytest.mark.parametrize(("route", "name"), [("vm", "tpu-a"), ("spot", "tpu-a-qr")])
def test_a_stop_before_a_kept_node_is_handed_over_deletes_it(tmp_path, route, name):
    cloud = MemoryCloud()
    cancel = CancelToken()
    cloud.on_create = lambda zone, node: cancel.set("SIGTERM")  # a signal while it is made
    code, names = keep_launch(tmp_path, cloud, cancel, route)
    assert "Kept" not in names and "TeardownVerified" in names
    assert cloud.nodes == {} and cloud.queued == {}
    assert on_disk(tmp_path)[-1] == (name, RUN, "gone")
    assert code == EXIT_FAILED


def test_keep_asked_for_by_the_user_stands_even_though_it_stops_the_launch(tmp_path):
    cloud = MemoryCloud()
    cancel = CancelToken()
    cloud.on_create = lambda zone, node: cancel.request_keep()
    _code, names = keep_launch(tmp_path, cloud, cancel)
    assert "Kept" in names and "TeardownStarted" not in names
    assert (ZONE, "tpu-a") in cloud.nodes
    assert on_disk(tmp_path)[-1] == ("tpu-a", RUN, "kept")


def test_a_kept_flex_start_node_records_the_deadline_google_ends_it_at(tmp_path, monkeypatch):
    from dataclasses import replace

    from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps

    # Set up and verified (only a proven node is handed over: test_keep_guarded.py).
    monkeypatch.setattr(WorkerSteps, "bootstrap", lambda self, transport: None)
    monkeypatch.setattr(WorkerSteps, "verify", lambda self, t: setattr(self, "receipt_ok", True))
    plan = replace(make_plan(tmp_path, "flex"), deadline=Deadline(30, keep=True))
    events: list = []
    run_launch(plan, make_runtime(tmp_path, MemoryCloud()), events.append, CancelToken())
    (kept,) = [e for e in events if type(e).__name__ == "Kept"]
    assert kept.ended_by == "google" and kept.deadline is not None
    (entry,) = Ledger(ledger_path(tmp_path)).open_entries()
    # status and every Kept: line read this record: "no watchdog: it bills until deleted"
    # would be wrong for a node Google ends at its maximum run time.
    assert entry.op == "kept" and entry.extra["deadline"] == kept.deadline
    assert entry.extra["ended_by"] == "google"


def test_a_spot_node_preempted_during_a_kept_launch_is_deleted_not_kept(tmp_path):
    from dataclasses import replace

    cloud = MemoryCloud()
    rt = make_runtime(tmp_path, cloud)

    def preempted_once_reached(node):  # Google takes the VM while the launch works on it
        cloud.nodes[(ZONE, node.name)] = replace(node, state="PREEMPTED", endpoints=())
        return FakeTransport(len(node.endpoints))

    rt.make_transport = preempted_once_reached
    events: list = []
    plan = replace(make_plan(tmp_path, "spot"), deadline=Deadline(keep=True))
    code = run_launch(plan, rt, events.append, CancelToken())
    names = [type(e).__name__ for e in events]
    assert "Kept" not in names and "TeardownVerified" in names
    (failed,) = [e for e in events if type(e).__name__ == "Failed"]
    assert "preempted" in failed.diagnosis.title
    assert cloud.nodes == {} and cloud.queued == {}
    assert on_disk(tmp_path)[-1] == ("tpu-a-qr", RUN, "gone")
    assert code == EXIT_CLOUD


@pytest.mark.parametrize("route", ["vm", "spot", "flex"])
def test_each_state_on_the_way_names_the_route_whose_bound_it_waits_under(tmp_path, route):
    outcome = launch(tmp_path, MemoryCloud(), route)
    states = [e for e in outcome.events if type(e).__name__ == "Provisioning"]
    assert states and {e.route for e in states} == {route}
