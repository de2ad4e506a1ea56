"""`run --checkpoints` on a kept spot node that Google preempts (issue 28): the chain's own loop
(resume/chain.py) over the kept node's attempts, against the in-memory cloud. The node is kept
by the launch's code as `up` keeps it; the script's run on the node is stood in for (the first
is preempted, the second finishes); the recreate is the launch's own, from `up`'s settings in
the ledger, its intent recorded before the create."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes import MemoryCloud
from tests.plans import launch_plan
from tests.unit.test_launch_safety import ZONE, make_runtime
from tpuwizard.core.cancel import CancelToken
from tpuwizard.core.errors import BadInput, NodeGone
from tpuwizard.core.evidence.chain import CHAIN_FILE, check_chain
from tpuwizard.core.exit_codes import EXIT_CLOUD, EXIT_OK
from tpuwizard.core.launch.events import launch_events as ev
from tpuwizard.core.launch.kept.record import SETTINGS_FIELD
from tpuwizard.core.launch.kept.settings import kept_chain_end
from tpuwizard.core.launch.lifecycle.launch import run_launch
from tpuwizard.core.launch.lifecycle.on_workers import WorkerSteps
from tpuwizard.core.launch.plan.packages import PackageSpec
from tpuwizard.core.launch.plan.parts import Deadline, Workload
from tpuwizard.core.launch.records.ledger import Entry, Ledger, Resource
from tpuwizard.core.paths import owner_label
from tpuwizard.core.remote.checkpoints import CheckpointSet, CheckpointsHome, file_sha256
from tpuwizard.core.remote.sync import LocalFolder
from tpuwizard.session.kept.nodes import KeptNode
from tpuwizard.session.kept.resume import CheckpointsAsked
from tpuwizard.session.ledgers import ledger_for
from tpuwizard.session.session import Session

ACCELERATOR = "v5litepod-4"


@pytest.fixture
def world(tmp_path, home, monkeypatch):
    """A practice session over one in-memory cloud; its workers' bootstrap and verifier stood
    in for (the in-memory workers run nothing)."""
    cloud = MemoryCloud()
    session = Session(practice=True, runs=tmp_path / "runs")
    monkeypatch.setattr(Session, "cloud_for", lambda self, backend: cloud)

    def runtime(_cloud, _practice, _transport="ssh", _os_login=None, _account=None):
        return replace(make_runtime(tmp_path, cloud), ledger=ledger_for(True), owner=owner_label())

    monkeypatch.setattr("tpuwizard.session.runtime.build_runtime", runtime)
    monkeypatch.setattr(WorkerSteps, "bootstrap", lambda self, transport: None)
    monkeypatch.setattr(
        WorkerSteps, "verify", lambda self, transport: setattr(self, "receipt_ok", True)
    )
    return cloud, session


def up(session: Session, tmp_path: Path) -> str:
    """`up --route spot --max-run 45 --with einops`, kept as `up` keeps it; its node's name."""
    plan = launch_plan(
        accelerator=ACCELERATOR,
        zone=ZONE,
        project=session.project or "",
        run_id="up-1",
        run_dir=tmp_path / "runs" / "up-1",
        route="spot",
        name="dev",
        deadline=Deadline(45, keep=True),
        workload=Workload(packages=(PackageSpec("einops", "--with"),)),
    )
    events: list[ev.Event] = []
    rt = replace(  # labelled as up labels it: this install's owner (run and ssh check it)
        make_runtime(tmp_path, session.cloud_for("tpu-api")),
        ledger=session.ledger,
        owner=owner_label(),
    )
    assert run_launch(plan, rt, events.append, CancelToken()) == EXIT_OK
    assert isinstance(events[-2], ev.Kept)
    return plan.node_name


def made_set(home: CheckpointsHome, name: str) -> None:
    """A complete set come home, as a copy pass leaves it."""
    made = CheckpointsHome(home.folder.parent / "made")
    (made.folder / name).mkdir(parents=True)
    (made.folder / name / "state.npz").write_bytes(b"four steps in")
    (made.folder / name / "COMMITTED").write_text("4\n")
    files = {
        rel: {
            "size": (made.folder / name / rel).stat().st_size,
            "mtime_ns": 1,
            "sha256": file_sha256(made.folder / name / rel),
        }
        for rel in ("state.npz", "COMMITTED")
    }
    home.take_from(made, CheckpointSet(name, 4, files))


def script(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "train.py").write_text("print('step')\n")
    return folder / "train.py"


def test_a_preempted_kept_node_is_made_again_from_ups_settings_and_the_run_resumes(
    world, tmp_path, monkeypatch
):
    cloud, session = world
    old = up(session, tmp_path)
    (old_entry,) = session.kept.entries()
    runs: list[tuple[str, str | None, dict[str, str]]] = []

    def run_once(self: KeptNode, plan, folder, emit, cancel):
        resume = plan.resume
        runs.append(
            (self.name, resume.resume_from.name if resume.resume_from else None, resume.env())
        )
        if len(runs) == 1:  # a set came home, then Google took the node
            made_set(resume.home, "step_000004")
            node = cloud.nodes[(ZONE, self.name)]
            cloud.nodes[(ZONE, self.name)] = replace(node, state="PREEMPTED")
            return EXIT_CLOUD, NodeGone(self.name, "PREEMPTED", "while your script ran", "closed")
        emit(ev.ScriptFinished(0))
        return EXIT_OK, None

    monkeypatch.setattr(KeptNode, "run_once", run_once)
    events: list[ev.Event] = []
    kept = session.kept.open(None)
    asked = CheckpointsAsked("ckpt", 60.0, 3)
    train = script(tmp_path)
    code = kept.run(
        train, (), (), LocalFolder.of_script(train), events.append, CancelToken(), checkpoints=asked
    )
    assert code == EXIT_OK, [e for e in events if isinstance(e, ev.Failed)]

    (new_entry,) = session.kept.entries()
    new = new_entry.resource.node_id
    assert new != old and new_entry.resource.zone == ZONE and new_entry.resource.route == "spot"
    # Made from up's settings: the same packages, the old node's deadline (not a fresh 45 min).
    settings = dict(new_entry.extra[SETTINGS_FIELD])
    assert settings.pop("max_run_minutes") <= 45
    assert {**old_entry.extra[SETTINGS_FIELD], "max_run_minutes": None} == {
        **settings,
        "max_run_minutes": None,
    }
    assert settings["packages"] == [["einops", "--with"]]
    # The second run is on the new node, from the set that came home, told to resume.
    assert [r[0] for r in runs] == [old, new]
    assert runs[1][1] == "step_000004" and runs[1][2]["TPUWIZARD_RESUME"] == "1"
    assert runs[1][2]["TPUWIZARD_CHECKPOINTS"] == "ckpt"

    kinds = [type(e).__name__ for e in events]
    order = [
        "Preempted",
        "TeardownVerified",
        "Recreating",
        "ResourceExists",
        "Kept",
        "KeptReplaced",
    ]
    assert [k for k in kinds if k in order] == order
    assert kinds.count("Finished") == 1  # the run's own, not the recreate's
    replaced = next(e for e in events if isinstance(e, ev.KeptReplaced))
    assert (replaced.old_name, replaced.new_name) == (old, new)
    assert isinstance(events[-1], ev.Finished)
    assert events[-1] == replace(events[-1], remaining=[new])

    # The ledger: the old node gone (naming its replacement) before the new one's intent, and
    # the intent before the create.
    lines = [json.loads(line) for line in session.ledger.path.read_text().splitlines()]
    old_gone = next(i for i, r in enumerate(lines) if r["op"] == "gone" and r["run_id"] == "up-1")
    new_ops = [
        (i, r["op"]) for i, r in enumerate(lines) if r["run_id"] == new_entry.resource.run_id
    ]
    assert new_ops[0][1] == "intent" and new_ops[1][1] == "created" and old_gone < new_ops[0][0]
    folded = {e.resource.run_id: e for e in Ledger(session.ledger.path).entries()}
    assert folded["up-1"].op == "gone" and folded["up-1"].extra["replaced_by"] == new
    assert (ZONE, old) not in cloud.nodes and (ZONE, new) in cloud.nodes

    chain = json.loads((tmp_path / "runs" / events[0].run_id / CHAIN_FILE).read_text())  # type: ignore[attr-defined]
    assert [(a["node"], a["ended"]) for a in chain["attempts"]] == [
        (old, "preempted"),
        (new, "finished"),
    ]
    assert check_chain(chain, tmp_path / "runs" / events[0].run_id)[1] == []  # type: ignore[attr-defined]

    with pytest.raises(BadInput, match=f"{old} was preempted and replaced.*--node {new}"):
        session.kept.open(old)  # what watch, ssh and run --node say on the old name


def test_a_stop_during_the_recreate_deletes_the_new_node_and_keeps_nothing(
    world, tmp_path, monkeypatch
):
    cloud, session = world
    up(session, tmp_path)
    cancel = CancelToken()

    def run_once(self: KeptNode, plan, folder, emit, token):
        node = cloud.nodes[(ZONE, self.name)]
        cloud.nodes[(ZONE, self.name)] = replace(node, state="PREEMPTED")
        cloud.on_create = lambda zone, name: cancel.set("SIGTERM")  # while the new one is made
        return EXIT_CLOUD, NodeGone(self.name, "PREEMPTED", "while your script ran", "closed")

    monkeypatch.setattr(KeptNode, "run_once", run_once)
    events: list[ev.Event] = []
    train = script(tmp_path)
    kept = session.kept.open(None)
    asked = CheckpointsAsked("ckpt", 60.0, 3)
    code = kept.run(
        train, (), (), LocalFolder.of_script(train), events.append, cancel, checkpoints=asked
    )
    assert code != EXIT_OK
    assert session.ledger.open_entries() == [] and cloud.nodes == {} and cloud.queued == {}
    assert isinstance(events[-1], ev.Finished) and events[-1].remaining == []
    assert not any(isinstance(e, ev.KeptReplaced) for e in events)


def test_the_chain_of_a_kept_node_ends_at_its_deadline():
    r = Resource("queued", "p", ZONE, "dev-qr", ACCELERATOR, "up-1", "spot", "dev")
    assert kept_chain_end(Entry(r, "kept", 1, 1, {"deadline": 5000.0}), now=100.0) == 5000.0
    settings = {SETTINGS_FIELD: {"max_run_minutes": 45}}
    assert kept_chain_end(Entry(r, "kept", 1, 1, settings), now=100.0) == 100.0 + 45 * 60
